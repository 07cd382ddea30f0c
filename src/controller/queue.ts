import { ItemBackoffLimiter } from '../kube/workqueue/rate-limiter.js';
import { WorkQueue } from '../kube/workqueue/queue.js';
import type { BackoffOptions } from '../time/backoff.js';
import { systemClock, type Clock } from '../time/clock.js';

/** The queue's items and the calls a reconcile returns: decide/work-items.ts (pure). */
export { PASS, parseItem, readItem, retryItem, type ParsedItem, type WorkItem } from './decide/work-items.js';
import { PASS, parseItem, type WorkItem } from './decide/work-items.js';

/** A pass that threw: 1 s doubling to 30 s. */
export const PASS_BACKOFF: BackoffOptions = {
  initialMs: 1_000,
  maxMs: 30_000,
  jitter: 0.5,
  resetAfterMs: Number.MAX_SAFE_INTEGER,
};
/** A Service whose write failed: 0.5 s doubling to 5 min, jittered; others are unaffected. */
export const WRITE_BACKOFF: BackoffOptions = {
  initialMs: 500,
  maxMs: 300_000,
  jitter: 0.25,
  resetAfterMs: Number.MAX_SAFE_INTEGER,
};
/**
 * A name held by a foreign Service (or a read that failed): read again after 2 s, doubling to
 * 5 min, so one that goes away is noticed soon and one that stays costs a GET every few minutes.
 */
export const READ_BACKOFF: BackoffOptions = {
  initialMs: 2_000,
  maxMs: 300_000,
  jitter: 0.25,
  resetAfterMs: Number.MAX_SAFE_INTEGER,
};

function curveOf(item: WorkItem): BackoffOptions {
  switch (parseItem(item).kind) {
    case 'pass':
      return PASS_BACKOFF;
    case 'retry':
      return WRITE_BACKOFF;
    case 'read':
      return READ_BACKOFF;
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
