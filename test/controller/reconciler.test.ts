import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EndpointRecord } from '../../src/binding/types.js';

import { ControllerQueue } from '../../src/controller/queue.js';
import type { Reconciler } from '../../src/controller/reconciler.js';
import { waitFor } from '../kube/helpers.js';
import { ManualClock, settle } from '../helpers/manual-clock.js';
import { FakeServiceApi } from './fake-service-api.js';
import { HARNESS_CONFIG, ep, startReconcilerHarness, type ReconcilerHarness } from './reconciler-harness.js';

const config = HARNESS_CONFIG;

/**
 * The reconciler on a manual clock: caches from kubesim (an empty cluster), or from the in-memory
 * stand-in for the watches (fake-cluster.ts, no kubesim), writes to a faithful fake of the
 * Services API. Every delay is the work queue's, so the test moves time itself. The same
 * assertions hold on both: the reconciler needs no more of the cluster than its read model.
 */
describe.each(['kubesim', 'memory'] as const)(
  'reconciler (%s cluster): scheduling and write backoff on the clock seam',
  (cluster) => scheduling(cluster),
);

function scheduling(cluster: 'kubesim' | 'memory'): void {
  let harness: ReconcilerHarness;
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
      cluster,
    });
    ({ reconciler } = harness);
  });
  afterAll(async () => {
    await harness?.stop();
  });

  const creates = (key: string) => api.requests.filter((r) => r === `create ${key}`).length;
  const stateOf = (id: string) => reconciler.statuses.find((s) => s.id === id);
  async function idle(): Promise<void> {
    for (let i = 0; i < 5; i++) await settle();
  }

  it('reads the names first, then writes; a refused Service rests and is retried only when its backoff ends', async () => {
    api.forbid = (verb, key) => verb === 'create' && key === 'prod/api';
    endpoints = [ep('ep_a', 'http://api.prod')];
    // The caches' first events ran a pass at t = 0; the next may start at t = 10. It reads both
    // names, then writes.
    queue.requestPass();
    await clock.advance(10);
    await waitFor(() => creates('prod/api') === 1, 'first attempt');
    await idle();
    expect(api.requests.slice(0, 2).sort()).toEqual(['get ops/ep-a', 'get prod/api']);
    expect(api.read('ops/ep-a')).toBeDefined();
    expect(stateOf('ep_a')).toMatchObject({
      state: 'error',
      reason: expect.stringMatching(/^writing its Services failed: services "api" is forbidden/),
    });

    // Passes for other reasons (at most one per 10 ms) leave the resting Service alone.
    const passes = reconciler.passCount;
    for (let i = 0; i < 3; i++) {
      queue.requestPass();
      await clock.advance(10);
      await idle();
    }
    expect(reconciler.passCount).toBeGreaterThanOrEqual(passes + 3);
    expect(creates('prod/api')).toBe(1);

    // 0.5 s after the failure (random 0: no jitter) a pass tries it again; it fails again: 1 s next.
    await clock.advance(500 - 30 - 1);
    await idle();
    expect(creates('prod/api')).toBe(1);
    await clock.advance(1);
    await waitFor(() => creates('prod/api') === 2, 'second attempt');
    await idle();
    await clock.advance(999);
    await idle();
    expect(creates('prod/api')).toBe(2);

    // The API server accepts it now: written when the backoff ends, and the error is gone.
    api.forbid = undefined;
    await clock.advance(1);
    await waitFor(() => creates('prod/api') === 3, 'third attempt');
    await idle();
    expect(api.read('prod/api')?.spec?.externalName).toBe('ep-a.ops.svc.cluster.local');
    expect(stateOf('ep_a')).toMatchObject({ state: 'projected', reason: '' });
  });

  it('a name held by a foreign Service is read again with backoff, and taken once it is gone', async () => {
    api.put({
      metadata: { name: 'web', namespace: 'prod', labels: { team: 'other' } },
      spec: { type: 'ClusterIP', ports: [{ port: 1, protocol: 'TCP' }] },
    });
    endpoints = [...endpoints, ep('ep_b', 'http://web.prod')];
    queue.requestPass();
    await clock.advance(10);
    await waitFor(() => stateOf('ep_b')?.state === 'name-conflict', 'name-conflict');
    await idle();
    const reads = () => api.requests.filter((r) => r === 'get prod/web').length;
    expect(reads()).toBe(1);
    expect(creates('prod/web')).toBe(0); // known before the plan: never tried
    await clock.advance(2_000);
    await waitFor(() => reads() === 2, 'recheck after 2 s');
    api.remove('prod/web');
    await clock.advance(3_999);
    await idle();
    expect(reads()).toBe(2);
    await clock.advance(1);
    await waitFor(() => stateOf('ep_b')?.state === 'projected', 'projected once the name is free');
    expect(api.read('prod/web')?.metadata.labels?.['endpoint-binder.io/role']).toBe('alias');
  });
}
