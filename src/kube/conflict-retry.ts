import { isConflict } from './errors.js';

export interface ConflictRetryOptions {
  /** Attempts in all, the first included; 4. */
  attempts?: number;
  /** Other errors that mean "someone wrote first; read again and retry" (an AlreadyExists race). */
  alsoRetry?: (err: unknown) => boolean;
}

/**
 * Read-modify-write against optimistic concurrency, as client-go's `retry.RetryOnConflict`:
 * `attempt` reads what it needs and writes with the resourceVersion it read; a 409 Conflict (the
 * object changed in between) runs it again, with a fresh read, up to `attempts` times in all.
 * The last Conflict is thrown when they run out; any other error at once. `attempt` gets its
 * number (0 first), so it can reuse an object it already holds on the first try.
 */
export async function retryOnConflict<T>(
  attempt: (n: number) => Promise<T>,
  opts: ConflictRetryOptions = {},
): Promise<T> {
  const attempts = Math.max(1, opts.attempts ?? 4);
  for (let n = 0; ; n++) {
    try {
      return await attempt(n);
    } catch (err) {
      const retriable = isConflict(err) || (opts.alsoRetry?.(err) ?? false);
      if (!retriable || n + 1 >= attempts) throw err;
    }
  }
}
