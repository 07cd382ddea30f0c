import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EndpointRecord } from '../../src/binding/types.js';
import { ControllerQueue } from '../../src/controller/queue.js';
import type { Service } from '../../src/kube/index.js';
import { waitFor } from '../kube/helpers.js';
import { captureLogs } from '../helpers/logs.js';
import { ManualClock, settle } from '../helpers/manual-clock.js';
import { FakeServiceApi } from './fake-service-api.js';
import { HARNESS_CONFIG, startReconcilerHarness, type ReconcilerHarness } from './reconciler-harness.js';

const config = HARNESS_CONFIG;

/** Creates wait at a gate the test opens one by one, so a pass is "long" on the manual clock. */
class GatedServiceApi extends FakeServiceApi {
  private waiting: (() => void)[] = [];
  private opened = false;

  override async create(svc: Service): Promise<Service> {
    if (!this.opened) await new Promise<void>((r) => this.waiting.push(r));
    return super.create(svc);
  }

  open(): void {
    this.opened = true;
    this.release(this.waiting.length);
  }

  get held(): number {
    return this.waiting.length;
  }

  release(n: number): void {
    for (const r of this.waiting.splice(0, n)) r();
  }
}

/** #19 item 6: a long first sync logs `sync progress` with applied/total every 2 s (Clock seam). */
describe('reconciler: sync progress', () => {
  let harness: ReconcilerHarness;
  const clock = new ManualClock();
  const api = new GatedServiceApi();
  const queue = new ControllerQueue(10, clock);
  const logs = captureLogs('info');
  const endpoints: EndpointRecord[] = Array.from({ length: 5 }, (_, i) => ({
    id: `ep_${i}`,
    url: `http://svc-${i}.prod`,
    created_at: '2026-01-01T00:00:00Z',
  }));
  let served = false;

  beforeAll(async () => {
    harness = await startReconcilerHarness({
      config,
      clock,
      api,
      queue,
      endpoints: () => (served ? endpoints : []),
      log: logs.logger,
    });
  });
  afterAll(async () => {
    api.open();
    await harness?.stop();
  });

  const progress = () =>
    logs.lines.filter((l) => l['msg'] === 'sync progress').map((l) => [l['applied'], l['total']]);

  it('logs applied of total every 2 s while the writes of a pass run, and nothing once they are done', async () => {
    served = true;
    queue.requestPass();
    await clock.advance(10);
    // Every endpoint has an internal Service and an alias: 10 creates, 4 at a time.
    await waitFor(() => api.held === 4, 'the first writes to wait at the gate');
    expect(progress()).toEqual([]);
    await clock.advance(2_000);
    expect(progress()).toEqual([[0, 10]]);
    api.release(4);
    // New aliases go first (their internal Services record the uids): the fifth waits alone.
    await waitFor(() => api.held === 1, 'the last alias');
    await clock.advance(2_000);
    expect(progress()).toEqual([
      [0, 10],
      [4, 10],
    ]);
    api.open();
    await waitFor(
      () => api.requests.filter((r) => r.startsWith('create ')).length >= 10,
      'every create of the pass',
    ).catch((err: unknown) => {
      throw new Error(`${String(err)}: ${api.requests.join(', ')}`);
    });
    for (let i = 0; i < 5; i++) await settle();
    // That pass is over: its ticker stopped (later passes of this harness are short and gate-free).
    const ofFirstPass = () => progress().filter(([, total]) => total === 10).length;
    const seen = ofFirstPass();
    await clock.advance(10_000);
    expect(ofFirstPass()).toBe(seen);
  });
});
