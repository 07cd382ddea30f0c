/**
 * A sliding-window request limit per account: at most `requests` in any `windowMs`. When over,
 * it says how many whole seconds until the oldest request leaves the window (Retry-After).
 */
export class RateLimiter {
  private readonly hits = new Map<string, number[]>();

  constructor(
    private readonly requests: number,
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Records a request; returns undefined when allowed, else the Retry-After seconds. */
  take(key: string): number | undefined {
    const now = this.now();
    const cutoff = now - this.windowMs;
    const list = (this.hits.get(key) ?? []).filter((t) => t > cutoff);
    if (list.length >= this.requests) {
      this.hits.set(key, list);
      return Math.max(1, Math.ceil((list[0]! + this.windowMs - now) / 1000));
    }
    list.push(now);
    this.hits.set(key, list);
    return undefined;
  }
}
