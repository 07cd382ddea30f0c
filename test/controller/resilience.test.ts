import { afterEach, describe, expect, it } from 'vitest';
import { MANAGED_BY_LABEL, STATE_LABEL } from '../../src/binding/identity.js';
import { kinds, type Service } from '../../src/kube/index.js';
import { OPERATOR_NS, eventually, quietFor, startEnv, type ControllerEnv } from './env.js';

const targetPorts = (services: Service[]): Record<string, unknown> =>
  Object.fromEntries(
    services
      .filter((s) => s.metadata.namespace === OPERATOR_NS && s.metadata.labels?.[MANAGED_BY_LABEL])
      .map((s) => [s.metadata.name, s.spec?.ports?.map((p) => p.targetPort)]),
  );

describe('controller: drift, restarts, failover, outages', () => {
  let env: ControllerEnv | undefined;
  afterEach(async () => {
    await env?.close();
    env = undefined;
  });

  it('restores a projected Service that someone edits or deletes', async () => {
    env = await startEnv();
    const ctl = await env.startController();
    const ep = await env.createEndpoint('http://api.prod');
    const alias = await eventually(() => env!.service('prod', 'api'), 'alias');
    const edited = { ...alias, spec: { ...alias.spec, externalName: 'evil.example.com' } };
    await env.kube.replace(kinds.service, edited);
    await eventually(
      async () => (await env!.service('prod', 'api'))?.spec?.externalName?.startsWith('ep-'),
      'externalName restored',
    );

    const internal = await eventually(() => env!.internalOf(ep.id), 'internal');
    const port = internal.spec?.ports?.[0]?.targetPort;
    await env.kube.deleteIfExists(kinds.service, OPERATOR_NS, internal.metadata.name);
    const back = await eventually(async () => {
      const s = await env!.service(OPERATOR_NS, internal.metadata.name);
      return s && s.metadata.uid !== internal.metadata.uid ? s : undefined;
    }, 'internal re-created');
    expect(back.spec?.ports?.[0]?.targetPort).toBe(port);
    expect(ctl.status().endpoints[0]?.state).toBe('projected');
  });

  it('keeps every port across a restart and writes nothing', async () => {
    env = await startEnv({ namespaces: ['prod', 'shop'] });
    const first = await env.startController();
    for (const url of ['http://a.prod', 'http://b.prod:8080', 'tcp://c.shop:6379', 'http://a.prod:81'])
      await env.createEndpoint(url);
    await eventually(
      async () => env!.writes.cache.list().filter((s) => s.metadata.labels?.[MANAGED_BY_LABEL]).length === 7,
      'all projected',
    );
    await eventually(() => first.isReady(), 'ready');
    const before = targetPorts(env.writes.cache.list());
    await first.stop();

    env.writes.reset();
    const second = await env.startController();
    await eventually(() => second.isReady() && second.status().endpoints.length === 4, 'second ready');
    expect(await quietFor(env.writes, 800)).toBe(0);
    expect(env.writes.total()).toBe(0);
    expect(targetPorts(env.writes.cache.list())).toEqual(before);
  });

  it('fails over to another replica, which reuses every port; the follower never writes', async () => {
    env = await startEnv();
    const a = await env.startController({ identity: 'replica-a' });
    await eventually(() => a.isLeader(), 'a leads');
    const b = await env.startController({ identity: 'replica-b' });
    await eventually(() => b.isReady(), 'follower ready');
    expect(b.isLeader()).toBe(false);

    const ep = await env.createEndpoint('http://api.prod');
    const internal = await eventually(() => env!.internalOf(ep.id), 'projected by a');
    const port = internal.spec?.ports?.[0]?.targetPort;
    await eventually(() => b.status().endpoints[0]?.state === 'projected', 'follower sees it');
    expect(b.isLeader()).toBe(false);

    await a.stop();
    await eventually(() => b.isLeader(), 'b takes over');
    const ep2 = await env.createEndpoint('http://web.prod');
    await eventually(() => env!.service('prod', 'web'), 'b projects new endpoints');
    expect((await env.internalOf(ep.id))?.spec?.ports?.[0]?.targetPort).toBe(port);
    expect((await env.internalOf(ep.id))?.metadata.resourceVersion).toBe(internal.metadata.resourceVersion);
    expect(ep2.id).not.toBe(ep.id);
  });

  it('removes nothing during an API outage (5xx, HTML 502, timeouts, the API gone)', async () => {
    env = await startEnv();
    const ctl = await env.startController({ api: { baseUrl: env.mock.url, timeoutMs: 500 } });
    const ep = await env.createEndpoint('http://api.prod');
    await eventually(() => env!.service('prod', 'api'), 'projected');
    await eventually(() => ctl.isReady(), 'ready');
    env.writes.reset();
    const listing = '/kubernetes_operators';
    for (const fault of [
      { status: 503, count: 1000, path_prefix: listing },
      { status: 502, count: 1000, html: true, path_prefix: listing },
      { status: 503, count: 1000, hang: true, path_prefix: listing },
    ]) {
      await env.mock.admin('POST', '/admin/faults', fault);
      expect(await ctl.resyncNow()).toBe(false);
      await env.mock.admin('DELETE', '/admin/faults');
    }
    expect(await quietFor(env.writes, 300)).toBe(0);
    expect(env.writes.total()).toBe(0);

    await env.mock.api.stop();
    expect(await ctl.resyncNow()).toBe(false);
    expect(await quietFor(env.writes, 1_000)).toBe(0);
    expect(await env.service('prod', 'api')).toBeDefined();
    expect(await env.internalOf(ep.id)).toBeDefined();
    expect(ctl.status().endpoints.find((e) => e.id === ep.id)?.state).toBe('projected');
  });

  it('applies changes that happened while the notification stream was down', async () => {
    env = await startEnv();
    const ctl = await env.startController();
    await eventually(() => ctl.isReady() && ctl.status().notificationsLive, 'live');
    // The events endpoint fails for a while: the stream drops and reconnect attempts are refused.
    await env.mock.admin('POST', '/admin/faults', {
      status: 503,
      count: 20,
      path_prefix: '/kubernetes_operators',
    });
    const ep = await env.createEndpoint('http://late.prod');
    await env.mock.admin('DELETE', '/admin/faults');
    await eventually(() => env!.service('prod', 'late'), 'projected after the stream returned');
    await eventually(() => ctl.status().notificationsLive, 'stream live again');
    // Observed status: projected once this replica's caches show both Services.
    await eventually(
      () => ctl.status().endpoints.find((e) => e.id === ep.id)?.state === 'projected',
      'status shows it projected',
    );
  });

  it('converges a burst of 100 endpoints with exactly one write per Service', async () => {
    env = await startEnv({ namespaces: ['burst'] });
    const ctl = await env.startController();
    await eventually(() => ctl.isReady(), 'ready');
    env.writes.reset();
    await Promise.all(Array.from({ length: 100 }, (_, i) => env!.createEndpoint(`http://svc-${i}.burst`)));
    await eventually(() => ctl.status().counts['projected'] === 100, '100 projected', 30_000);
    await eventually(
      () => env!.writes.cache.list().filter((s) => s.metadata.labels?.[MANAGED_BY_LABEL]).length === 200,
      '200 Services',
      30_000,
    );
    await quietFor(env.writes, 500);
    expect(env.writes.total()).toBe(200);
  });

  it('two installs in one cluster never touch each other', async () => {
    env = await startEnv({ namespaces: ['prod', 'team-a', 'team-b'] });
    await env.kube.create(kinds.namespace, { metadata: { name: 'other-ops' } });
    const a = await env.startController({
      releaseName: 'alpha',
      bindings: { endpointSelector: "endpoint.namespace != 'team-b'" },
    });
    const b = await env.startController({
      releaseName: 'beta',
      operatorNamespace: 'other-ops',
      bindings: { endpointSelector: "endpoint.namespace == 'team-b' || endpoint.host == 'both.prod'" },
    });
    const onlyA = await env.createEndpoint('http://x.team-a');
    const onlyB = await env.createEndpoint('http://y.team-b');
    const both = await env.createEndpoint('http://both.prod');
    await eventually(() => env!.service('team-a', 'x'), 'a projects x');
    await eventually(() => env!.service('team-b', 'y'), 'b projects y');
    expect((await env.service('team-b', 'y'))?.metadata.labels?.['app.kubernetes.io/instance']).toBe('beta');
    // One alias name, two installs: whoever came first holds it, the other reports a conflict.
    await eventually(() => {
      const sa = a.status().endpoints.find((e) => e.id === both.id)?.state;
      const sb = b.status().endpoints.find((e) => e.id === both.id)?.state;
      return [sa, sb].sort().join() === 'name-conflict,projected';
    }, 'one projects, one conflicts');
    expect(await env.internalOf(onlyA.id, OPERATOR_NS)).toBeDefined();
    expect(await env.internalOf(onlyB.id, 'other-ops')).toBeDefined();
    // Unselecting in alpha removes only alpha's objects.
    await env.mock.client.endpoints.delete(onlyA.id);
    await eventually(async () => !(await env!.service('team-a', 'x')), 'x gone');
    expect(await env.service('team-b', 'y')).toBeDefined();
    expect((await env.service('team-b', 'y'))?.metadata.labels?.[STATE_LABEL]).toBe('projected');
  });
});
