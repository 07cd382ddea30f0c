import { ItemBackoffLimiter } from '../kube/workqueue/rate-limiter.js';
import { WorkQueue } from '../kube/workqueue/queue.js';
import type { BackoffOptions } from '../time/backoff.js';
import { NAME_READ_CURVE, PASS_CURVE, SERVICE_WRITE_CURVE } from '../time/curves.js';
import { systemClock, type Clock } from '../time/clock.js';

/**
 * The controller's one work queue and what goes through it:
 *
 * - `pass`: the world changed (an endpoint, a Service or Namespace event, leadership); one
 *   reconcile pass follows. Cluster events add it with a short delay (`requestPass`), so a burst
 *   of them is one pass; endpoint changes add it at once.
 * - `read:<namespace>/<name>`: find out again who holds a Service name the projection asked
 *   about, with backoff, while a foreign Service holds it or its read failed (the first read of a
 *   name happens inside the pass, before the plan).
 * - `retry:<namespace>/<name>`: a Service whose write failed has waited out its backoff.
 */
export type WorkItem = 'pass' | `read:${string}` | `retry:${string}`;

export const PASS: WorkItem = 'pass';
export const readItem = (key: string): WorkItem => `read:${key}`;
export const retryItem = (key: string): WorkItem => `retry:${key}`;

export type ParsedItem = { kind: 'pass' } | { kind: 'read' | 'retry'; key: string };

export function parseItem(item: WorkItem): ParsedItem {
  if (item === PASS) return { kind: 'pass' };
  const colon = item.indexOf(':');
  const kind = item.slice(0, colon);
  const rest = item.slice(colon + 1);
  return { kind: kind === 'read' ? 'read' : 'retry', key: rest };
}

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
