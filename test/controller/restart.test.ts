import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Endpoint } from '../../src/api/schemas/endpoint.js';
import { STATE_LABEL } from '../../src/binding/identity.js';
import type { Controller } from '../../src/controller/controller.js';
import { kinds, type Service } from '../../src/kube/index.js';
import { OPERATOR_NS, eventually, quietFor, startEnv, type ControllerEnv } from './env.js';

const internalName = (id: string) => id.replace('_', '-');

/** When the replica last finished a pass as leader (0: never); every leader pass sets it. */
async function leaderPassAt(c: Controller): Promise<number> {
  const m = await c.registry.getSingleMetric('endpoint_binder_last_apply_timestamp_seconds')?.get();
  return m?.values[0]?.value ?? 0;
}

/**
 * A cluster holding every projection state, then a leader change and a restart over it: both
 * must write nothing (counted by a watch of every Service, independent of the controllers).
 * Foreign names are known before the first pass, so nothing is written as `projected` and then
 * corrected, and no alias points at a foreign Service even for a moment.
 */
describe('controller: a restart and a leader change over an unchanged cluster write nothing', () => {
  let env: ControllerEnv;
  let first: Controller;
  let second: Controller;
  const ep: Record<string, Endpoint> = {};
  const foreign: Record<string, Service> = {};
  const expected: Record<string, string> = {};
  const config = {
    bindings: {
      endpointSelector: "endpoint.description != 'skip'",
      // Seven URLs get a port (a namespace-denied endpoint needs none); the eighth, newest,
      // finds the range full.
      portRange: { min: 10000, max: 10006 },
    },
  };
  const statesOf = (c: Controller): Record<string, string> =>
    Object.fromEntries(
      Object.entries(ep).map(([what, e]) => [
        what,
        c.status().endpoints.find((s) => s.id === e.id)?.state ?? '-',
      ]),
    );

  beforeAll(async () => {
    // A namespace being deleted stays Terminating for the whole test.
    env = await startEnv({
      namespaces: ['prod', 'mixed', 'pool', 'bad', 'leaving'],
      namespaceFinalizeDelayMs: 600_000,
    });
    const create = async (
      what: string,
      url: string,
      state: string,
      extra: Parameters<ControllerEnv['createEndpoint']>[1] = {},
    ) => {
      ep[what] = await env.createEndpoint(url, extra);
      expected[what] = state;
    };
    await create('projected', 'http://api.prod', 'projected');
    // The alias name is held by a foreign Service.
    foreign['taken'] = await env.kube.create(kinds.service, {
      metadata: { name: 'taken', namespace: 'prod', labels: { team: 'other' } },
      spec: { type: 'ClusterIP', ports: [{ port: 9999, protocol: 'TCP' }] },
    });
    await create('alias-foreign', 'http://taken.prod', 'name-conflict');
    // A hostname group whose older member's internal name is held by a foreign Service.
    await create('group-older', 'http://grp.prod', 'name-conflict');
    await create('group-newer', 'tcp://grp.prod:5432', 'projected');
    foreign['older-internal'] = await env.kube.create(kinds.service, {
      metadata: {
        name: internalName(ep['group-older']!.id),
        namespace: OPERATOR_NS,
        labels: { team: 'other' },
      },
      spec: { type: 'ClusterIP', ports: [{ port: 9999, protocol: 'TCP' }] },
    });
    // The alias name is another endpoint's internal Service: the operator namespace is closed to
    // aliases by the namespace policy (issue #18), which decides first.
    await create(
      'alias-is-internal',
      `http://${internalName(ep['projected']!.id)}.${OPERATOR_NS}`,
      'namespace-denied',
    );
    await create('namespace-missing', 'http://web.nowhere', 'namespace-missing');
    await create('namespace-terminating', 'http://web.leaving', 'namespace-missing');
    await create('port-winner', 'http://dual.mixed:8080', 'projected');
    await create('port-conflict', 'tcp://dual.mixed:8080', 'port-conflict');
    await create('pooled-a', 'http://same.pool', 'projected', { pooling_enabled: true });
    await create('pooled-b', 'http://same.pool', 'projected', { pooling_enabled: true });
    await create('invalid-url', 'http://9svc.bad', 'invalid-url');
    await create('not-selected', 'http://hidden.prod', 'not-selected', { description: 'skip' });
    await create('ports-exhausted', 'http://late.prod', 'ports-exhausted');
  });
  afterAll(async () => {
    await env?.close();
  });

  it('converges once, with every state', async () => {
    first = await env.startController({ ...config, identity: 'replica-1' });
    await eventually(() => first.isLeader() && first.isReady(), 'first leads and is ready');
    // The namespace goes away while its alias exists: the alias stays, its endpoint waits.
    await eventually(() => env.service('leaving', 'web'), 'alias in leaving');
    await env.kube.deleteIfExists(kinds.namespace, undefined, 'leaving');
    await eventually(
      () => JSON.stringify(statesOf(first)) === JSON.stringify(expected),
      `states ${JSON.stringify(expected)}`,
    );
    await eventually(
      async () =>
        (await env.internalOf(ep['namespace-terminating']!.id))?.metadata.labels?.[STATE_LABEL] ===
        'namespace-missing',
      'terminating namespace recorded on the internal Service',
    );
    const grp = await eventually(() => env.service('prod', 'grp'), 'group alias');
    expect(grp.spec?.externalName).toBe(
      `${internalName(ep['group-newer']!.id)}.${OPERATOR_NS}.svc.cluster.local`,
    );
    expect(await quietFor(env.writes, 500)).toBe(0);
  });

  it('a follower learns the foreign names too and shows the same states; taking over writes nothing', async () => {
    second = await env.startController({ ...config, identity: 'replica-2' });
    await eventually(() => second.isReady(), 'follower ready');
    expect(second.isLeader()).toBe(false);
    expect(statesOf(second)).toEqual(expected);

    env.writes.reset();
    await first.stop(); // releases the lease: the follower takes over at once
    await eventually(() => second.isLeader(), 'second leads');
    await eventually(async () => (await leaderPassAt(second)) > 0, 'a pass as leader');
    expect(await quietFor(env.writes, 1_000)).toBe(0);
    expect(env.writes.total()).toBe(0);
    expect(statesOf(second)).toEqual(expected);
  });

  it('a restart writes nothing either, and leaves the foreign Services untouched', async () => {
    await second.stop();
    env.writes.reset();
    const third = await env.startController({ ...config, identity: 'replica-3' });
    await eventually(() => third.isLeader() && third.isReady(), 'third leads and is ready');
    await eventually(async () => (await leaderPassAt(third)) > 0, 'a pass as leader');
    expect(await quietFor(env.writes, 1_000)).toBe(0);
    expect(env.writes.total()).toBe(0);
    expect(statesOf(third)).toEqual(expected);
    // Nor does it ask the API about endpoints one by one (deletion proofs): its listing knows them.
    const calls = await third.registry.getSingleMetric('endpoint_binder_api_calls_total')?.get();
    expect(calls?.values.filter((v) => v.labels['call'] === 'get_endpoint')).toEqual([]);
    for (const f of Object.values(foreign)) {
      const now = await env.service(f.metadata.namespace!, f.metadata.name);
      expect(now?.metadata.resourceVersion).toBe(f.metadata.resourceVersion);
    }
  });
});
