import {
  nextBackoff,
  initialBackoffState,
  type BackoffOptions,
  type BackoffState,
} from '../../time/backoff.js';

/**
 * How long an item waits before it is retried, as client-go's `workqueue.RateLimiter`: `when`
 * records a failure and answers the delay, `forget` ends the item's failure sequence.
 */
export interface RateLimiter<T> {
  when(item: T): number;
  forget(item: T): void;
  /** Failures recorded for the item since it was last forgotten. */
  numRequeues(item: T): number;
}

/**
 * Per-item exponential backoff (client-go's `ItemExponentialFailureRateLimiter`), with the
 * delay from THE backoff of `src/time/backoff.ts`. `optionsFor` lets one queue carry items of
 * several kinds with their own curves (a write retry, a recheck of a foreign name).
 */
export class ItemBackoffLimiter<T> implements RateLimiter<T> {
  private readonly state = new Map<T, BackoffState>();

  constructor(
    private readonly optionsFor: (item: T) => BackoffOptions,
    private readonly now: () => number,
    private readonly random: () => number,
  ) {}

  when(item: T): number {
    const r = nextBackoff(
      this.state.get(item) ?? initialBackoffState,
      this.now(),
      this.random(),
      this.optionsFor(item),
    );
    this.state.set(item, r.state);
    return r.delayMs;
  }

  forget(item: T): void {
    this.state.delete(item);
  }

  numRequeues(item: T): number {
    return this.state.get(item)?.attempt ?? 0;
  }
}
