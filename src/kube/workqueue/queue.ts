import { systemClock, type Clock } from '../../time/clock.js';
import type { RateLimiter } from './rate-limiter.js';

export interface WorkQueueOptions<T> {
  limiter: RateLimiter<T>;
  /** Delays run on this clock, so scheduling is testable without waiting. */
  clock?: Clock;
}

interface Timer {
  at: number;
  cancel: AbortController;
}

/**
 * A rate-limited work queue in the manner of client-go's `util/workqueue`:
 *
 * - `add` coalesces: an item already waiting to be processed is not queued twice, and an item
 *   added while a worker processes it is queued again once that worker calls `done` (so one item
 *   is never processed by two workers at once, and no change is lost).
 * - `addAfter` holds an item until a delay has passed (the earliest of several delays wins).
 * - `addRateLimited` is `addAfter` with the delay from the rate limiter (per-item backoff);
 *   `forget` ends that item's backoff sequence.
 * - `get` waits for an item; `done` releases it.
 *
 * Sources (watches, timers, the notification feed) call `add`; workers loop on `get`/`done`.
 */
export class WorkQueue<T> {
  private readonly clock: Clock;
  private readonly queue: T[] = [];
  private head = 0;
  private readonly dirty = new Set<T>();
  private readonly processing = new Set<T>();
  private readonly waiting = new Map<T, number>();
  private timer: Timer | undefined;
  private readonly getters: ((item: T | undefined) => void)[] = [];
  private stopped = false;

  constructor(private readonly opts: WorkQueueOptions<T>) {
    this.clock = opts.clock ?? systemClock;
  }

  add(item: T): void {
    if (this.stopped || this.dirty.has(item)) return;
    this.dirty.add(item);
    if (this.processing.has(item)) return;
    const getter = this.getters.shift();
    if (getter) {
      this.dirty.delete(item);
      this.processing.add(item);
      getter(item);
    } else {
      this.queue.push(item);
    }
  }

  addAfter(item: T, delayMs: number): void {
    if (this.stopped) return;
    if (delayMs <= 0) {
      this.add(item);
      return;
    }
    const at = this.clock.now() + delayMs;
    const current = this.waiting.get(item);
    if (current !== undefined && current <= at) return;
    this.waiting.set(item, at);
    if (!this.timer || at < this.timer.at) this.arm(at);
  }

  /** `addAfter` with the rate limiter's delay for the item; returns that delay. */
  addRateLimited(item: T): number {
    const delayMs = this.opts.limiter.when(item);
    this.addAfter(item, delayMs);
    return delayMs;
  }

  forget(item: T): void {
    this.opts.limiter.forget(item);
  }

  numRequeues(item: T): number {
    return this.opts.limiter.numRequeues(item);
  }

  /** True while the item waits out a delay (`addAfter`, `addRateLimited`). */
  isWaiting(item: T): boolean {
    return this.waiting.has(item);
  }

  /** Items ready to be processed (not counting those waiting out a delay or in process). */
  get length(): number {
    return this.queue.length - this.head;
  }

  /** The next item; resolves undefined once the queue is shut down or `signal` aborts. */
  get(signal?: AbortSignal): Promise<T | undefined> {
    if (this.stopped || signal?.aborted) return Promise.resolve(undefined);
    if (this.length > 0) {
      const item = this.queue[this.head++]!;
      if (this.head > 1024 && this.head * 2 > this.queue.length) {
        this.queue.splice(0, this.head);
        this.head = 0;
      }
      this.dirty.delete(item);
      this.processing.add(item);
      return Promise.resolve(item);
    }
    return new Promise((resolve) => {
      const onAbort = (): void => {
        const i = this.getters.indexOf(deliver);
        if (i >= 0) this.getters.splice(i, 1);
        resolve(undefined);
      };
      const deliver = (item: T | undefined): void => {
        signal?.removeEventListener('abort', onAbort);
        resolve(item);
      };
      this.getters.push(deliver);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Marks the item processed; if it was added meanwhile, it is queued again. */
  done(item: T): void {
    this.processing.delete(item);
    if (this.dirty.has(item)) {
      this.dirty.delete(item);
      this.add(item);
    }
  }

  /** Stops handing out items; waiting getters resolve undefined, delays are dropped. */
  shutDown(): void {
    this.stopped = true;
    this.timer?.cancel.abort();
    this.timer = undefined;
    this.waiting.clear();
    for (const g of this.getters.splice(0)) g(undefined);
  }

  /** One timer for the earliest delayed item (`next`), re-armed when an earlier one arrives. */
  private arm(next: number): void {
    this.timer?.cancel.abort();
    const timer: Timer = { at: next, cancel: new AbortController() };
    this.timer = timer;
    void this.clock.sleep(Math.max(0, next - this.clock.now()), timer.cancel.signal).then(() => {
      if (timer.cancel.signal.aborted) return;
      this.timer = undefined;
      const now = this.clock.now();
      let later: number | undefined;
      for (const [item, at] of this.waiting) {
        if (at > now) {
          if (later === undefined || at < later) later = at;
          continue;
        }
        this.waiting.delete(item);
        this.add(item);
      }
      if (later !== undefined) this.arm(later);
    });
  }
}
