/**
 * A sliding-window limit per key (an account, a source address): at most `requests` in any
 * `windowMs`. When over, it says how many whole seconds until the oldest hit leaves the window
 * (Retry-After).
 */
export class RateLimiter {
  private readonly hits = new Map<string, number[]>();

  constructor(
    private readonly requests: number,
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
    /** Keys tracked at once; past it the least recently hit key is forgotten (bounded memory). */
    private readonly maxKeys = 10_000,
  ) {}

  private current(key: string, now: number): number[] {
    const cutoff = now - this.windowMs;
    const list = (this.hits.get(key) ?? []).filter((t) => t > cutoff);
    if (list.length === 0) this.hits.delete(key);
    return list;
  }

  /** Seconds until a hit would be allowed again, or undefined when it is allowed now. Records nothing. */
  retryAfter(key: string): number | undefined {
    const now = this.now();
    const list = this.current(key, now);
    if (list.length < this.requests) return undefined;
    return Math.max(1, Math.ceil((list[0]! + this.windowMs - now) / 1000));
  }

  /** Counts one hit against the key, whether or not it is over the limit. */
  record(key: string): void {
    const now = this.now();
    const list = this.current(key, now);
    list.push(now);
    this.hits.delete(key); // re-insert: Map order is then least recently hit first
    this.hits.set(key, list.slice(-this.requests));
    if (this.hits.size > this.maxKeys) this.hits.delete(this.hits.keys().next().value!);
  }

  /** Records a request; returns undefined when allowed, else the Retry-After seconds. */
  take(key: string): number | undefined {
    const retryAfter = this.retryAfter(key);
    if (retryAfter === undefined) this.record(key);
    return retryAfter;
  }
}
