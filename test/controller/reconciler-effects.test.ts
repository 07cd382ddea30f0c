import { beforeEach, describe, expect, it } from 'vitest';
import type { EndpointRecord } from '../../src/binding/types.js';
import { PASS, readItem, retryItem, type QueueOp } from '../../src/controller/decide/work-items.js';
import { ControllerQueue } from '../../src/controller/queue.js';
import type { Reconciler } from '../../src/controller/reconciler.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { FakeCluster } from './fake-cluster.js';
import { FakeServiceApi } from './fake-service-api.js';
import { HARNESS_CONFIG, ep, harnessReconciler } from './reconciler-harness.js';

const config = HARNESS_CONFIG;

/** The queue calls without their log lines (asserted on their own where they matter). */
const calls = (ops: readonly QueueOp[]): string[] =>
  ops.map((o) => (o.op === 'requestPass' ? 'requestPass' : `${o.op} ${o.item}`));

/**
 * Issue #28 item 2: the Reconciler returns its effects. Each work item is reconciled by calling
 * `reconcile()` directly, with no runner and no kubesim: the cluster is the in-memory stand-in for
 * the watches (fake-cluster.ts) over a faithful fake of the Services API, and the test reads the
 * queue calls the reconcile returns instead of a queue's state.
 */
describe('reconciler: a reconcile returns its queue calls (in-memory cluster)', () => {
  const signal = new AbortController().signal;
  let clock: ManualClock;
  let api: FakeServiceApi;
  let cluster: FakeCluster;
  let endpoints: EndpointRecord[];
  let reconciler: Reconciler;

  beforeEach(() => {
    clock = new ManualClock();
    api = new FakeServiceApi();
    cluster = new FakeCluster({ identity: config.identity, source: api, namespaces: ['ops', 'prod'] });
    endpoints = [ep('ep_a', 'http://api.prod')];
    reconciler = harnessReconciler({
      config,
      clock,
      api,
      // Never used: the queue is the runner's; these tests are the runner.
      queue: new ControllerQueue(10, clock),
      endpoints: () => endpoints,
      cluster,
    });
  });

  const stateOf = (id: string) => reconciler.statuses.find((s) => s.id === id);

  it('a first pass reads both names, writes both Services and asks for a pass; the next pass over the same cluster writes nothing and asks for nothing', async () => {
    const first = await reconciler.reconcile(PASS, signal);
    expect(first.error).toBeUndefined();
    expect(api.requests).toEqual(['get ops/ep-a', 'get prod/api', 'create prod/api', 'create ops/ep-a']);
    // Both names were free: no recheck is kept; the writes ask for a pass so statuses settle.
    expect(calls(first.queue)).toEqual(['forget read:ops/ep-a', 'forget read:prod/api', 'requestPass']);
    expect(stateOf('ep_a')).toMatchObject({ state: 'projected', reason: '' });
    expect(reconciler.passCount).toBe(1);
    expect(reconciler.caughtUp).toBe(true);

    const second = await reconciler.reconcile(PASS, signal);
    expect(second).toEqual({ queue: [] });
    expect(api.requests).toHaveLength(4);
    expect(reconciler.passCount).toBe(2);
    expect([...reconciler.plannedServices.keys()].sort()).toEqual(['ops/ep-a', 'prod/api']);
  });

  it('a refused write returns its backoff with the log line that says why; the Service rests until its retry item, which asks for a pass', async () => {
    api.forbid = (verb, key) => verb === 'create' && key === 'prod/api';
    const first = await reconciler.reconcile(PASS, signal);
    const backoff = first.queue.find((o) => o.op === 'addRateLimited');
    expect(backoff).toMatchObject({
      op: 'addRateLimited',
      item: retryItem('prod/api'),
      log: {
        level: 'warn',
        msg: 'service write failed',
        requeues: true,
        fields: { service: 'prod/api', op: 'create', error: expect.stringMatching(/is forbidden/) },
      },
    });
    expect(stateOf('ep_a')).toMatchObject({
      state: 'error',
      reason: expect.stringMatching(/^writing its Services failed: services "api" is forbidden/),
    });

    // Resting: another pass leaves it alone (no create) and still shows the error.
    const creates = () => api.requests.filter((r) => r === 'create prod/api').length;
    await reconciler.reconcile(PASS, signal);
    expect(creates()).toBe(1);
    expect(stateOf('ep_a')?.state).toBe('error');

    // Its backoff ran out: the retry item asks for a pass; a retry item of no failure asks nothing.
    expect(calls((await reconciler.reconcile(retryItem('prod/api'), signal)).queue)).toEqual(['requestPass']);
    expect((await reconciler.reconcile(retryItem('prod/other'), signal)).queue).toEqual([]);

    // Written now; the failure is over and its backoff forgotten.
    api.forbid = undefined;
    const third = await reconciler.reconcile(PASS, signal);
    expect(creates()).toBe(2);
    expect(calls(third.queue)).toContain(`forget ${retryItem('prod/api')}`);
    expect(stateOf('ep_a')).toMatchObject({ state: 'projected', reason: '' });
  });

  it('a name held by a foreign Service is rechecked with backoff; a recheck of a name no pass asked about is forgotten unread', async () => {
    api.put({
      metadata: { name: 'api', namespace: 'prod', labels: { team: 'other' } },
      spec: { type: 'ClusterIP', ports: [{ port: 1, protocol: 'TCP' }] },
    });
    // The read finds it held before anything is planned: this pass ends and asks for another at once.
    const first = await reconciler.reconcile(PASS, signal);
    expect(calls(first.queue)).toEqual([
      `forget ${readItem('ops/ep-a')}`,
      `addRateLimited ${readItem('prod/api')}`,
      `add ${PASS}`,
    ]);
    await reconciler.reconcile(PASS, signal);
    expect(stateOf('ep_a')?.state).toBe('name-conflict');
    expect(api.requests.filter((r) => r.startsWith('create prod/'))).toEqual([]);

    // Still held: read again, nothing changed, no pass asked for.
    const recheck = await reconciler.reconcile(readItem('prod/api'), signal);
    expect(calls(recheck.queue)).toEqual([`addRateLimited ${readItem('prod/api')}`]);

    // Gone: the read sees it free, forgets the recheck and asks for a pass.
    api.remove('prod/api');
    const freed = await reconciler.reconcile(readItem('prod/api'), signal);
    expect(calls(freed.queue)).toEqual([`forget ${readItem('prod/api')}`, 'requestPass']);

    const reads = api.requests.length;
    const stray = await reconciler.reconcile(readItem('prod/nobody-asked'), signal);
    expect(calls(stray.queue)).toEqual([`forget ${readItem('prod/nobody-asked')}`]);
    expect(api.requests).toHaveLength(reads);
  });

  it('a pass that throws returns the queue calls it decided before it threw, with the error (the runner requeues the pass)', async () => {
    const boom = new Error('read model unavailable');
    // After the names are read (their rechecks decided), before the plan.
    cluster.retainNames = () => {
      throw boom;
    };
    const result = await reconciler.reconcile(PASS, signal);
    expect(result.error).toBe(boom);
    expect(calls(result.queue)).toEqual(['forget read:ops/ep-a', 'forget read:prod/api']);
    expect(api.requests.filter((r) => r.startsWith('create'))).toEqual([]);
    expect(reconciler.awaitsListing).toBe(false);
  });
});
