import { applyJitter, baseDelay } from '../../time/backoff.js';
import { API_RETRY_CURVE, withBounds, type CurveBounds } from '../../time/curves.js';

/** Retry policy of the client: exponential backoff with full jitter, Retry-After honoured. */
export interface RetryPolicy extends CurveBounds {
  /** Retries after the first attempt; 0 disables retrying. */
  retries: number;
  /** Longest Retry-After the client agrees to wait; longer ones fail at once. */
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = {
  retries: 3,
  initialMs: API_RETRY_CURVE.initialMs,
  maxMs: API_RETRY_CURVE.maxMs,
  maxRetryAfterMs: 60_000,
};

const IDEMPOTENT = new Set(['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS']);

export function isIdempotent(method: string): boolean {
  return IDEMPOTENT.has(method.toUpperCase());
}

export function isRetryableStatus(status: number): boolean {
  return status === 429 || status >= 500;
}

/** Parses Retry-After as seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, now: number = Date.now()): number | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * Delay before retry number `attempt` (1-based): the server's Retry-After when it gave one,
 * otherwise a random delay up to the exponential ceiling ("full jitter").
 */
export function retryDelayMs(
  policy: RetryPolicy,
  attempt: number,
  retryAfterMs: number | undefined,
  random = Math.random,
): number {
  if (retryAfterMs !== undefined) return retryAfterMs;
  const curve = withBounds(API_RETRY_CURVE, policy);
  const ceiling = baseDelay(Math.max(0, attempt - 1), curve);
  // Full jitter: anywhere from 0 to the ceiling.
  return applyJitter(ceiling, curve.jitter, 1 - random());
}
