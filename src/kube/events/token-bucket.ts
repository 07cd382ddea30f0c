/**
 * A token bucket: `take()` is true while tokens last; they refill at `perSecond` up to `burst`.
 * The event recorder's spam filter (as client-go's `tools/record/events_cache.go`): Normal
 * Events from a bulk convergence (thousands of creates) must not double the API server's writes.
 */
export class TokenBucket {
  private tokens: number;
  private last: number;

  constructor(
    private readonly burst: number,
    private readonly perSecond: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.tokens = burst;
    this.last = now();
  }

  take(): boolean {
    const t = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((t - this.last) / 1000) * this.perSecond);
    this.last = t;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}
