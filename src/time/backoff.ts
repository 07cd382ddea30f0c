/**
 * Exponential backoff with jitter, in the style of client-go's `ExponentialBackoffManager`:
 * delays double from `initialMs` up to `maxMs`, and the sequence starts again from `initialMs`
 * once `resetAfterMs` has passed since the previous failure. The product's curves are named in
 * curves.ts.
 */
export interface BackoffOptions {
  initialMs: number;
  maxMs: number;
  /** Fraction in [0, 1]: each delay is reduced by up to this share at random (spreads herds). */
  jitter: number;
  resetAfterMs: number;
  /** Growth factor; 2. */
  factor?: number;
  /** Upper bound on a server's Retry-After we are willing to honour; 5 min. */
  maxRetryAfterMs?: number;
}

export interface BackoffState {
  /** Failures counted in the current sequence. */
  attempt: number;
  /** When the previous failure was recorded, if any. */
  lastFailureAt: number | undefined;
}

export const initialBackoffState: BackoffState = { attempt: 0, lastFailureAt: undefined };

/** The un-jittered delay for the n-th consecutive failure (n from 0). */
export function baseDelay(attempt: number, opts: BackoffOptions): number {
  const factor = opts.factor ?? 2;
  const raw = opts.initialMs * Math.pow(factor, Math.min(attempt, 64));
  return Math.min(opts.maxMs, raw);
}

/** `base` reduced by up to `jitter` of itself; `random` is in [0, 1). */
export function applyJitter(base: number, jitter: number, random: number): number {
  const j = Math.min(1, Math.max(0, jitter));
  return Math.max(0, Math.round(base * (1 - j * random)));
}

/**
 * Records a failure at `now` and returns the delay before the next attempt plus the new state.
 * A server's Retry-After (ms) raises the delay but never lowers it.
 */
export function nextBackoff(
  state: BackoffState,
  now: number,
  random: number,
  opts: BackoffOptions,
  retryAfterMs?: number,
): { delayMs: number; state: BackoffState } {
  const stale = state.lastFailureAt !== undefined && now - state.lastFailureAt > opts.resetAfterMs;
  const attempt = stale ? 0 : state.attempt;
  let delayMs = applyJitter(baseDelay(attempt, opts), opts.jitter, random);
  if (retryAfterMs !== undefined && retryAfterMs > 0) {
    delayMs = Math.max(delayMs, Math.min(retryAfterMs, opts.maxRetryAfterMs ?? 300_000));
  }
  return { delayMs, state: { attempt: attempt + 1, lastFailureAt: now } };
}

/** Small mutable wrapper for loops. */
export class Backoff {
  private state: BackoffState = initialBackoffState;

  constructor(private readonly opts: BackoffOptions) {}

  next(now: number, random: number, retryAfterMs?: number): number {
    const r = nextBackoff(this.state, now, random, this.opts, retryAfterMs);
    this.state = r.state;
    return r.delayMs;
  }

  reset(): void {
    this.state = initialBackoffState;
  }

  get attempt(): number {
    return this.state.attempt;
  }
}

/** A value in [min, max] (inclusive of min), e.g. watch timeouts and relist periods. */
export function randomInRange(min: number, max: number, random: number): number {
  if (max <= min) return min;
  return min + (max - min) * random;
}
