import { afterEach, describe, expect, it } from 'vitest';
import { MANAGED_BY_LABEL, REASON_ANNOTATION, STATE_LABEL } from '../../src/binding/identity.js';
import { kinds, type Service } from '../../src/kube/index.js';
import { captureLogs } from '../helpers/logs.js';
import { OPERATOR_NS, eventually, startEnv, type ControllerEnv } from './env.js';

const FINALIZER = 'example.com/hold';

/** Requests of `verb` on any Service (a create names none), as kubesim's audit log recorded them. */
function serviceRequests(env: ControllerEnv, verb: string): number {
  return env.sim.audit().filter((r) => r.attrs.resource === 'services' && r.attrs.verb === verb).length;
}

/** Requests of `verb` on Services named `name`, as kubesim's audit log recorded them. */
function requests(env: ControllerEnv, verb: string, name: string): number {
  return env.sim
    .audit()
    .filter((r) => r.attrs.resource === 'services' && r.attrs.verb === verb && r.attrs.name === name).length;
}

// One environment per test, closed after it whichever describe it is in.
let env: ControllerEnv | undefined;
afterEach(async () => {
  await env?.close();
  env = undefined;
});

/** A controller (logs captured) with one endpoint projected, and its internal Service as seen. */
async function projectedWeb(url = 'http://web.prod') {
  const started = await startEnv();
  env = started;
  const logs = captureLogs('info');
  const ctl = await started.startController({ logger: logs.logger });
  const ep = await started.createEndpoint(url);
  await eventually(() => ctl.status().counts['projected'] === 1, 'projected');
  const internal = await eventually(() => started.internalOf(ep.id), 'internal Service seen');
  return { env: started, logs, ctl, ep, internal };
}

describe('controller: Services held by finalizers', () => {
  it('a delete held by a finalizer is issued once, then waited on and reported as deleting', async () => {
    const { env, logs, ctl, ep, internal } = await projectedWeb();
    const name = internal.metadata.name;
    // Another controller holds the internal Service with a finalizer of its own.
    await env.kube.mergePatch(kinds.service, OPERATOR_NS, name, { metadata: { finalizers: [FINALIZER] } });
    const held = (): Service | undefined => env.writes.cache.get(OPERATOR_NS, name);
    await eventually(() => held()?.metadata['finalizers'], 'finalizer seen');

    await env.mock.client.endpoints.delete(ep.id);
    await eventually(() => held()?.metadata.deletionTimestamp, 'delete accepted, held by the finalizer');
    await eventually(() => ctl.status().deleting?.length === 1, 'reported as deleting');
    const [deleting] = ctl.status().deleting ?? [];
    expect(deleting).toMatchObject({ namespace: OPERATOR_NS, name });
    expect(deleting!.reason).toContain(`held by finalizer ${FINALIZER}`);

    // Passes keep running (other endpoints come and go); the held delete is not sent again.
    for (let i = 0; i < 3; i++) {
      await env.createEndpoint(`http://other-${i}.prod`);
      await eventually(() => ctl.status().counts['projected'] === i + 1, `other-${i} projected`);
    }
    await new Promise((r) => setTimeout(r, 1_500));
    expect(requests(env, 'delete', name)).toBe(1);
    expect(logs.count('service delete accepted; waiting for its finalizers')).toBe(1);

    // The other controller lets go: the delete completes, and nothing is written to that name again.
    await env.kube.mergePatch(kinds.service, OPERATOR_NS, name, { metadata: { finalizers: null } });
    await eventually(() => !held(), 'gone once the finalizer is removed');
    await eventually(() => ctl.status().deleting?.length === 0, 'no longer reported');
    expect(requests(env, 'delete', name)).toBe(1);
    await new Promise((r) => setTimeout(r, 500));
    expect(held()).toBeUndefined();
  });

  it('a wanted Service someone deleted while a finalizer holds it: the endpoint says deleting, then is projected again', async () => {
    const { env, ctl, ep, internal: first } = await projectedWeb('http://api.prod');
    const name = first.metadata.name;
    await env.kube.mergePatch(kinds.service, OPERATOR_NS, name, { metadata: { finalizers: [FINALIZER] } });
    await env.kube.deleteIfExists(kinds.service, OPERATOR_NS, name);
    await eventually(() => ctl.status().endpoints[0]?.state === 'deleting', 'reported as deleting');
    expect(ctl.status().endpoints[0]!.reason).toContain(
      `internal Service ${OPERATOR_NS}/${name} being deleted`,
    );
    expect(ctl.status().endpoints[0]!.reason).toContain(FINALIZER);
    // Nothing is written to a Service being deleted (an update would be undone by the delete).
    await env.createEndpoint('http://other.prod');
    await eventually(() => ctl.status().counts['projected'] === 1, 'other projected');
    expect(requests(env, 'update', name) + requests(env, 'patch', name)).toBe(1); // the test's own patch
    expect(requests(env, 'delete', name)).toBe(1); // the test's own delete

    await env.kube.mergePatch(kinds.service, OPERATOR_NS, name, { metadata: { finalizers: null } });
    await eventually(() => ctl.status().counts['projected'] === 2, 'recreated and projected');
    const again = await eventually(
      () => env.internalOf(ep.id).then((s) => (s?.metadata.uid !== first.metadata.uid ? s : undefined)),
      'recreated',
    );
    expect(again.metadata.uid).not.toBe(first.metadata.uid);
    expect(again.metadata.deletionTimestamp).toBeUndefined();
  });
});

describe('controller: delayed watch events', () => {
  it('a write whose watch event is delayed is not sent again', async () => {
    env = await startEnv();
    // A short overlay of unseen writes (30 s by default) and watches that are not restarted for
    // silence: the delayed events arrive late, on the same watch.
    const ctl = await env.startController({
      pendingWriteTtlMs: 300,
      cacheTuning: { inactivityMs: 60_000 },
    });
    await env.createEndpoint('http://a.prod');
    await eventually(() => ctl.status().counts['projected'] === 1, 'a projected');
    const creates0 = serviceRequests(env, 'create');

    env.sim.faults.hangWatches(true);
    await env.createEndpoint('http://b.prod');
    await eventually(() => serviceRequests(env!, 'create') === creates0 + 2, "b's two Services created");
    // Well past the overlay's 300 ms, passes run again (c's notification) with the cache still
    // not showing b's Services: the cache is provably older than b's writes, which stand.
    await new Promise((r) => setTimeout(r, 1_000));
    await env.createEndpoint('http://c.prod');
    await eventually(() => serviceRequests(env!, 'create') >= creates0 + 4, "c's two Services created");
    await new Promise((r) => setTimeout(r, 1_000));
    expect(serviceRequests(env, 'create')).toBe(creates0 + 4);
    expect(serviceRequests(env, 'update')).toBe(0);

    // The events arrive (the watches reconnect and replay from where they were): all three
    // converge with no further write.
    env.sim.faults.hangWatches(false);
    env.sim.faults.dropWatches();
    await eventually(() => ctl.status().counts['projected'] === 3, 'all three observed');
    await new Promise((r) => setTimeout(r, 500));
    expect(serviceRequests(env, 'create')).toBe(creates0 + 4);
    expect(serviceRequests(env, 'update') + serviceRequests(env, 'delete')).toBe(0);
  });
});

describe('controller: an alias that lost the managed-by label', () => {
  it('is reported as name-conflict with the reason, neither orphaned silently nor overwritten (only relabelled left-behind)', async () => {
    const { env, logs, ctl, ep, internal } = await projectedWeb();
    // Someone edits the alias and drops the label; it still serves this endpoint.
    const edited = await env.kube.mergePatch(kinds.service, 'prod', 'web', {
      metadata: { labels: { [MANAGED_BY_LABEL]: null } },
    });
    await eventually(() => ctl.status().endpoints[0]?.state === 'name-conflict', 'reported');
    const reason = ctl.status().endpoints[0]!.reason;
    expect(reason).toContain(`Service prod/web was this install's alias Service of endpoint ${ep.id}`);
    expect(reason).toContain(`lost the label ${MANAGED_BY_LABEL}=endpoint-binder`);
    expect(logs.count('service name held by a Service that lost our label; left untouched')).toBe(1);
    // Never deleted or taken back while it is not ours. One write only (issue #30): provably
    // created by this install, it stops saying `state=projected`; nothing else of it changes.
    const relabelled = await eventually(async () => {
      const live = await env.service('prod', 'web');
      return live?.metadata.labels?.[STATE_LABEL] === 'left-behind' ? live : undefined;
    }, 'relabelled left-behind');
    await new Promise((r) => setTimeout(r, 500));
    expect(requests(env, 'update', 'web'), 'one relabel').toBe(1);
    expect(requests(env, 'delete', 'web')).toBe(0);
    expect(requests(env, 'patch', 'web')).toBe(1); // the edit above
    const ours = (k: string): boolean => k === STATE_LABEL || k === REASON_ANNOTATION;
    const rest = (m: Record<string, string> | undefined) =>
      Object.fromEntries(Object.entries(m ?? {}).filter(([k]) => !ours(k)));
    expect(rest(relabelled.metadata.labels)).toEqual(rest(edited.metadata.labels));
    expect(rest(relabelled.metadata.annotations)).toEqual(rest(edited.metadata.annotations));
    expect(relabelled.spec).toEqual(edited.spec);
    expect((await env.service('prod', 'web'))?.metadata.resourceVersion).toBe(
      relabelled.metadata.resourceVersion,
    );
    expect((await env.internalOf(ep.id))?.metadata.uid).toBe(internal.metadata.uid);

    // The label restored: it is this install's alias again (the same object), projected.
    await env.kube.mergePatch(kinds.service, 'prod', 'web', {
      metadata: { labels: { [MANAGED_BY_LABEL]: 'endpoint-binder' } },
    });
    await eventually(() => ctl.status().endpoints[0]?.state === 'projected', 'projected again', 30_000);
    expect((await env.service('prod', 'web'))?.metadata.uid).toBe(edited.metadata.uid);
  });
});
