import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ENDPOINT_IDS_ANNOTATION,
  MANAGED_BY_LABEL,
  PORTS_ANNOTATION,
  REASON_ANNOTATION,
  STATE_LABEL,
} from '../../src/binding/identity.js';
import type { Controller } from '../../src/controller/controller.js';
import { KubeClient, kinds } from '../../src/kube/index.js';
import { OPERATOR_NS, eventually, startEnv, type ControllerEnv } from './env.js';

/** The spec's projection steps against the mock API, kubesim and an in-process controller. */
describe('controller: projecting endpoints', () => {
  let env: ControllerEnv;
  let ctl: Controller;

  beforeAll(async () => {
    env = await startEnv({ namespaces: ['prod', 'shop', 'multi', 'pool', 'mixed', 'bad'] });
    ctl = await env.startController({
      bindings: { endpointSelector: "!endpoint.metadata.startsWith('skip')" },
    });
    await eventually(() => ctl.isReady(), 'controller ready');
  });
  afterAll(async () => {
    await env?.close();
  });

  const stateOf = (id: string) => ctl.status().endpoints.find((e) => e.id === id);

  it('projects http://api.prod as internal Service ep-<id> and alias api.prod with the exact names', async () => {
    const ep = await env.createEndpoint('http://api.prod');
    const internalName = ep.id.replace('_', '-');
    const internal = await eventually(() => env.service(OPERATOR_NS, internalName), 'internal Service');
    const alias = await eventually(() => env.service('prod', 'api'), 'alias Service');

    expect(internal.spec?.type).toBe('ClusterIP');
    expect(internal.spec?.clusterIP).toMatch(/^10\./);
    expect(internal.spec?.selector).toEqual({
      'app.kubernetes.io/name': 'endpoint-binder',
      'app.kubernetes.io/instance': 'endpoint-binder',
      'app.kubernetes.io/component': 'forwarder',
    });
    const ports = internal.spec?.ports ?? [];
    expect(ports).toHaveLength(1);
    expect(ports[0]).toMatchObject({ name: 'http-80', port: 80, protocol: 'TCP' });
    const target = ports[0]!.targetPort as number;
    expect(target).toBeGreaterThanOrEqual(10000);
    expect(target).toBeLessThanOrEqual(19999);
    expect(JSON.parse(internal.metadata.annotations![PORTS_ANNOTATION]!)).toEqual({
      [String(target)]: 'http://api.prod:80',
    });
    // The ingress address is never on a Service (any Service writer could change it): the install
    // record, which only the controller writes, carries it.
    expect(internal.metadata.annotations).not.toHaveProperty('endpoint-binder.io/ingress');
    // It also lists the uid of every internal Service the controller created (issue #18 item 3:
    // port claims come only from those), written after the Service itself.
    const record = await eventually(async () => {
      const cm = await new KubeClient(env.sim.kubeConfig()).get(
        kinds.configMap,
        OPERATOR_NS,
        'endpoint-binder-install',
      );
      return cm?.data?.['internal-services'] === internal.metadata.uid ? cm : undefined;
    }, 'install record listing the internal Service');
    expect(record.data).toEqual({
      'ingress-address': env.mock.api.ingressAddress,
      'operator-id': ctl.status().operator!.id,
      'internal-services': internal.metadata.uid,
    });
    expect(record.metadata.labels).toMatchObject({ 'endpoint-binder.io/role': 'install-record' });
    expect(internal.metadata.labels).toMatchObject({
      [MANAGED_BY_LABEL]: 'endpoint-binder',
      'app.kubernetes.io/instance': 'endpoint-binder',
      'endpoint-binder.io/operator-namespace': OPERATOR_NS,
      [STATE_LABEL]: 'projected',
    });

    expect(alias.spec?.type).toBe('ExternalName');
    expect(alias.spec?.externalName).toBe(`${internalName}.${OPERATOR_NS}.svc.cluster.local`);
    expect(alias.spec?.ports?.map((p) => p.port)).toEqual([80]);
    expect(JSON.parse(alias.metadata.annotations![ENDPOINT_IDS_ANNOTATION]!)).toEqual([ep.id]);

    await eventually(() => stateOf(ep.id)?.state === 'projected', 'status projected');
    expect(stateOf(ep.id)).toMatchObject({
      internalService: { namespace: OPERATOR_NS, name: internalName },
      aliasService: { namespace: 'prod', name: 'api' },
      targetPort: target,
    });
  });

  it('removes both Services when the endpoint is deleted', async () => {
    const ep = await env.createEndpoint('tcp://db.prod:5432');
    const internalName = ep.id.replace('_', '-');
    await eventually(() => env.service('prod', 'db'), 'alias');
    await env.mock.client.endpoints.delete(ep.id);
    await eventually(
      async () => !(await env.service('prod', 'db')) && !(await env.service(OPERATOR_NS, internalName)),
      'both gone',
    );
    await eventually(() => stateOf(ep.id) === undefined, 'status forgets it');
  });

  it('removes both Services when the endpoint stops matching the selector, and brings them back', async () => {
    const ep = await env.createEndpoint('http://cart.shop');
    await eventually(() => env.service('shop', 'cart'), 'alias');
    await env.mock.client.endpoints.update(ep.id, { metadata: 'skip me' });
    await eventually(async () => !(await env.service('shop', 'cart')), 'alias removed');
    // The alias and the internal Service are two deletes of one pass: the second may land an
    // API call after the first.
    await eventually(async () => (await env.internalOf(ep.id)) === undefined, 'internal Service removed');
    await eventually(() => stateOf(ep.id)?.state === 'not-selected', 'not-selected');
    await env.mock.client.endpoints.update(ep.id, { metadata: 'keep' });
    await eventually(() => env.service('shop', 'cart'), 'alias back');
  });

  it('waits for a missing namespace and creates the alias when it appears', async () => {
    const ep = await env.createEndpoint('http://web.later');
    const internal = await eventually(() => env.internalOf(ep.id), 'internal Service first');
    expect(internal.metadata.labels?.[STATE_LABEL]).toBe('namespace-missing');
    expect(internal.metadata.annotations?.[REASON_ANNOTATION]).toContain('later');
    await eventually(() => stateOf(ep.id)?.state === 'namespace-missing', 'state namespace-missing');
    await env.kube.create(kinds.namespace, { metadata: { name: 'later' } });
    await eventually(() => env.service('later', 'web'), 'alias once the namespace exists');
    await eventually(
      async () => (await env.internalOf(ep.id))?.metadata.labels?.[STATE_LABEL] === 'projected',
      'label projected',
    );
  });

  it('never touches a foreign Service in the way and reports a name conflict', async () => {
    const foreign = await env.kube.create(kinds.service, {
      metadata: { name: 'taken', namespace: 'prod', labels: { team: 'other' } },
      spec: { type: 'ClusterIP', ports: [{ port: 9999, protocol: 'TCP' }] },
    });
    const ep = await env.createEndpoint('http://taken.prod');
    await eventually(() => stateOf(ep.id)?.state === 'name-conflict', 'name-conflict');
    expect(stateOf(ep.id)?.reason).toMatch(/taken/);
    const after = await env.service('prod', 'taken');
    expect(after?.metadata.resourceVersion).toBe(foreign.metadata.resourceVersion);
    expect(after?.metadata.labels).toEqual({ team: 'other' });
  });

  it('serves several ports of one hostname through one alias', async () => {
    const a = await env.createEndpoint('http://svc.multi');
    const b = await env.createEndpoint('tcp://svc.multi:5432');
    const alias = await eventually(async () => {
      const s = await env.service('multi', 'svc');
      return s?.spec?.ports?.length === 2 ? s : undefined;
    }, 'alias with both ports');
    expect(alias.spec?.ports?.map((p) => p.port)).toEqual([80, 5432]);
    expect(alias.spec?.externalName).toBe(`${a.id.replace('_', '-')}.${OPERATOR_NS}.svc.cluster.local`);
    const ia = await eventually(
      async () =>
        (await env.internalOf(a.id))?.spec?.ports?.length === 2 ? env.internalOf(a.id) : undefined,
      'a (the alias target) has both',
    );
    // Only the target carries the group's ports (issue #16: O(N) groups); b carries its own.
    const ib = await eventually(() => env.internalOf(b.id), 'b');
    expect(ib.spec?.ports?.map((p) => p.port)).toEqual([5432]);
    expect(ia.spec?.ports?.find((p) => p.port === 5432)).toEqual(ib.spec?.ports?.[0]);
  });

  it('pools identical URLs on one forwarder port', async () => {
    const a = await env.createEndpoint('http://same.pool', { pooling_enabled: true });
    const b = await env.createEndpoint('http://same.pool', { pooling_enabled: true });
    const ia = await eventually(() => env.internalOf(a.id), 'a');
    const ib = await eventually(() => env.internalOf(b.id), 'b');
    expect(ia.spec?.ports?.[0]?.targetPort).toBe(ib.spec?.ports?.[0]?.targetPort);
    await eventually(
      () => stateOf(b.id)?.state === 'projected' && stateOf(a.id)?.state === 'projected',
      'both projected',
    );
  });

  it('reports a second scheme on the same host and port as a port conflict', async () => {
    const older = await env.createEndpoint('http://dual.mixed:8080');
    const newer = await env.createEndpoint('tcp://dual.mixed:8080');
    await eventually(() => stateOf(newer.id)?.state === 'port-conflict', 'newer port-conflict');
    // Observed status: projected once the cluster shows the older endpoint's Services as planned.
    await eventually(() => stateOf(older.id)?.state === 'projected', 'the older endpoint projected');
    const alias = await eventually(() => env.service('mixed', 'dual'), 'alias');
    expect(alias.spec?.externalName).toContain(older.id.replace('_', '-'));
  });

  it('reports a URL a cluster cannot hold and keeps projecting the others', async () => {
    const bad = await env.createEndpoint('http://9svc.bad');
    const good = await env.createEndpoint('http://fine.bad');
    await eventually(() => env.service('bad', 'fine'), 'good one projected');
    await eventually(() => stateOf(bad.id)?.state === 'invalid-url', 'bad one invalid-url');
    expect(stateOf(bad.id)?.reason).toMatch(/9svc/);
    // The alias is written first (its internal Service records its uid), the state after the pass.
    await eventually(
      () => stateOf(good.id)?.state === 'projected' || undefined,
      'good one projected in status',
    );
    expect(stateOf(good.id)?.state).toBe('projected');
  });
});
