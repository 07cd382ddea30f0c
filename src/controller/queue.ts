import { ItemBackoffLimiter } from '../kube/workqueue/rate-limiter.js';
import { WorkQueue } from '../kube/workqueue/queue.js';
import type { BackoffOptions } from '../time/backoff.js';
import { NAME_READ_CURVE, PASS_CURVE, SERVICE_WRITE_CURVE } from '../time/curves.js';
import { systemClock, type Clock } from '../time/clock.js';

/** The queue's items and the calls a reconcile returns: decide/work-items.ts (pure). */
export { PASS, parseItem, readItem, retryItem, type ParsedItem, type WorkItem } from './decide/work-items.js';
import { PASS, parseItem, type WorkItem } from './decide/work-items.js';

function curveOf(item: WorkItem): BackoffOptions {
  switch (parseItem(item).kind) {
    case 'pass':
      return PASS_CURVE;
    case 'retry':
      return SERVICE_WRITE_CURVE;
    case 'read':
      return NAME_READ_CURVE;
  }
}

export class ControllerQueue extends WorkQueue<WorkItem> {
  private lastPassAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly coalesceMs: number,
    private readonly passClock: Clock = systemClock,
  ) {
    super({
      clock: passClock,
      limiter: new ItemBackoffLimiter<WorkItem>(
        curveOf,
        () => passClock.now(),
        () => passClock.random(),
      ),
    });
  }

  /**
   * Something changed: a pass follows, at once when none started within `coalesceMs`, else when
   * that much time has passed since the last one (passes run at most this often while changes
   * keep coming; changes during a pass make one more).
   */
  requestPass(): void {
    this.addAfter(PASS, this.lastPassAt + this.coalesceMs - this.passClock.now());
  }

  /** The reconciler starts a pass now. */
  passStarted(): void {
    this.lastPassAt = this.passClock.now();
  }
}
