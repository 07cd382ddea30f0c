import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EndpointRecord } from '../../src/binding/types.js';
import type { ClusterReadModel } from '../../src/controller/cluster.js';
import { ControllerQueue } from '../../src/controller/queue.js';
import type { Reconciler } from '../../src/controller/reconciler.js';
import { waitFor } from '../kube/helpers.js';
import { ManualClock, settle } from '../helpers/manual-clock.js';
import { FakeServiceApi } from './fake-service-api.js';
import { HARNESS_CONFIG, ep, startReconcilerHarness, type ReconcilerHarness } from './reconciler-harness.js';

const config = HARNESS_CONFIG;
const GRACE_MS = 60_000;

/**
 * Names a tenant used are not grabbed: the reconciler on a manual clock with a 60 s grace, caches
 * from kubesim, Service writes and name reads on a faithful fake of the Services API.
 */
describe('reconciler: the foreign-name grace period', () => {
  let harness: ReconcilerHarness;
  let cluster: ClusterReadModel;
  const clock = new ManualClock();
  const api = new FakeServiceApi();
  const queue = new ControllerQueue(10, clock);
  let endpoints: EndpointRecord[] = [];
  let reconciler: Reconciler;

  beforeAll(async () => {
    harness = await startReconcilerHarness({
      config,
      clock,
      api,
      queue,
      endpoints: () => endpoints,
      foreignNameGraceMs: GRACE_MS,
    });
    ({ cluster, reconciler } = harness);
  });
  afterAll(async () => {
    await harness?.stop();
  });

  const stateOf = (id: string) => reconciler.statuses.find((s) => s.id === id);
  const reads = (key: string) => api.requests.filter((r) => r === `get ${key}`).length;
  const creates = (key: string) => api.requests.filter((r) => r === `create ${key}`).length;
  async function idle(): Promise<void> {
    for (let i = 0; i < 5; i++) await settle();
  }
  /** Moves the clock in 500 ms steps until `done` (bounded). */
  async function advanceUntil(done: () => boolean, what: string, maxMs = 30_000): Promise<void> {
    for (let t = 0; t <= maxMs; t += 500) {
      await idle();
      if (done()) return;
      await clock.advance(500);
    }
    throw new Error(`not within ${maxMs} ms of clock time: ${what}`);
  }
  const foreign = (name: string) =>
    api.put({
      metadata: { name, namespace: 'prod', labels: { team: 'tenant' } },
      spec: { type: 'ClusterIP', ports: [{ port: 80, protocol: 'TCP' }] },
    });

  it('a foreign Service deleted: the alias is written only once the name has been free for the grace period', async () => {
    foreign('web');
    endpoints = [ep('ep_a', 'http://web.prod')];
    queue.requestPass();
    await advanceUntil(() => stateOf('ep_a')?.state === 'name-conflict', 'name-conflict');
    api.remove('prod/web');
    const before = reads('prod/web');
    await advanceUntil(() => reads('prod/web') > before, 'the recheck that sees the name free');
    // When the read saw it free (the grace counts from there).
    const freedAt = cluster.name('prod/web')?.freedAt ?? Number.NaN;
    expect(freedAt).toBeLessThanOrEqual(clock.now());
    await idle();
    await clock.advance(10);
    await idle();
    expect(stateOf('ep_a')).toMatchObject({
      state: 'name-conflict',
      reason: expect.stringMatching(
        /^Service prod\/web was held by a Service not managed by this install until recently; an alias takes the name only after it has been free for the grace period \(1m 0s left\)$/,
      ),
    });
    // Just before the grace ends: still nothing written.
    await clock.advance(freedAt + GRACE_MS - 1 - clock.now());
    await idle();
    expect(creates('prod/web')).toBe(0);
    expect(stateOf('ep_a')?.state).toBe('name-conflict');
    await clock.advance(1);
    await waitFor(() => stateOf('ep_a')?.state === 'projected', 'projected once the grace is over');
    expect(api.read('prod/web')?.metadata.labels?.['endpoint-binder.io/role']).toBe('alias');
  });

  it('the tenant recreates its Service within the grace period: it keeps the name', async () => {
    const original = foreign('app');
    endpoints = [...endpoints, ep('ep_b', 'http://app.prod')];
    queue.requestPass();
    await advanceUntil(() => stateOf('ep_b')?.state === 'name-conflict', 'name-conflict');
    api.remove('prod/app');
    const before = reads('prod/app');
    await advanceUntil(() => reads('prod/app') > before, 'the recheck that sees the name free');
    // A Helm upgrade that changed the Service's type: delete, then create, 20 s later.
    await clock.advance(20_000);
    await idle();
    const recreated = foreign('app');
    expect(recreated.metadata.uid).not.toBe(original.metadata.uid);
    await clock.advance(GRACE_MS);
    await advanceUntil(
      () => stateOf('ep_b')?.state === 'name-conflict' && !/left\)$/.test(stateOf('ep_b')!.reason),
      'the name found held again',
    );
    const now = api.read('prod/app');
    expect(now?.metadata.uid).toBe(recreated.metadata.uid);
    expect(now?.metadata.labels).toEqual({ team: 'tenant' });
    expect(now?.spec?.type).toBe('ClusterIP');
    expect(api.requests.filter((r) => r === 'replace prod/app' || r === 'delete prod/app')).toEqual([]);
  });
});
