import type { MonotonicClock } from '../../time/clock.js';

/**
 * One stretch of leadership, held as a deadline on the monotonic clock rather than a flag.
 *
 * In client-go the renew loop has its own goroutine; in Node the work and the renew loop share
 * one event loop, so a flag cleared by the renew loop can be stale for as long as the work
 * blocks (a busy loop, SIGSTOP). Instead the term is valid exactly while
 * `monotonicNow() < until`, `until` being the *send* time of the last successful write plus the
 * renew deadline. A follower starts its lease-duration countdown only after it has received that
 * write, so it cannot take over before `until` (leaseDuration > renewDeadline).
 *
 * A timer armed at each renewal aborts the work signal at the deadline, independently of the
 * renew loop (which may be stuck in a hung request). A timer fires late when the event loop was
 * blocked, so `active()` also ends the term itself when it finds the deadline passed; `holds()`
 * answers the same question without side effects.
 */
export class LeadershipTerm {
  private until: number;
  private readonly work = new AbortController();
  private timer: AbortController | undefined;

  constructor(
    private readonly clock: MonotonicClock,
    until: number,
    private readonly onExpired: () => void,
  ) {
    this.until = until;
    this.arm();
  }

  /** Aborted when the term ends: deadline passed (`'lost'`) or `end(reason)`. */
  get signal(): AbortSignal {
    return this.work.signal;
  }

  /** Exact at the instant of the call; no side effects (no abort listeners run inside it). */
  holds(): boolean {
    return !this.work.signal.aborted && this.clock.monotonicNow() < this.until;
  }

  /** Like `holds()`, but ends the term (aborting the work) if the deadline has passed. */
  active(): boolean {
    if (this.work.signal.aborted) return false;
    if (this.clock.monotonicNow() < this.until) return true;
    this.end('lost');
    this.onExpired();
    return false;
  }

  /** Milliseconds left; 0 once ended. No side effects. */
  remainingMs(): number {
    return this.holds() ? this.until - this.clock.monotonicNow() : 0;
  }

  /**
   * A renewal succeeded; `until` = its send time + renew deadline. False when the term had
   * already ended: a success that lands after the deadline does not revive leadership.
   */
  extend(until: number): boolean {
    if (!this.active()) return false;
    if (until > this.until) {
      this.until = until;
      this.arm();
    }
    return true;
  }

  /** Ends the term now (idempotent); the work signal aborts with `reason`. */
  end(reason: string): void {
    this.timer?.abort();
    this.timer = undefined;
    if (!this.work.signal.aborted) this.work.abort(reason);
  }

  private arm(): void {
    this.timer?.abort();
    const ctl = new AbortController();
    this.timer = ctl;
    // At least 1 ms, so that a timer firing early always makes progress.
    const wait = Math.max(1, this.until - this.clock.monotonicNow());
    void this.clock.sleep(wait, ctl.signal).then(() => {
      if (ctl.signal.aborted) return;
      // A timer may fire a hair early by the monotonic clock: then wait for the rest.
      if (this.active()) this.arm();
    });
  }
}
