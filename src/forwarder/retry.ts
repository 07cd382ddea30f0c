/**
 * Pure: which failed ingress attempts are worth another try for the same client connection,
 * and how long to wait. The client is waiting on an open TCP connection, so the budget is short
 * (bounded by `limits.prefaceTimeoutMs` and `MAX_ATTEMPTS`); conditions that last (bad token,
 * unknown URL, no upstream) are not retried at all.
 */

/** At most this many ingress attempts per client connection. */
export const MAX_ATTEMPTS = 4;

/**
 * Retryable: the ingress's transient refusals (preface timeout, upstream refused or unreachable,
 * at capacity, shutting down, internal error) and the dialer's transport failures (closed before
 * replying, no reply in time, could not connect). Not retried: protocol or credential errors
 * (ERR_700–ERR_720), unknown endpoint or missing upstream (ERR_721, ERR_722: they last longer than
 * a client waits), a malformed reply (ERR_792) and an abort (ERR_794).
 */
const RETRYABLE = new Set([
  'ERR_704',
  'ERR_730',
  'ERR_731',
  'ERR_740',
  'ERR_741',
  'ERR_750',
  'ERR_790',
  'ERR_791',
  'ERR_793',
]);

export function isRetryable(code: string): boolean {
  return RETRYABLE.has(code);
}

/** Delay before attempt `attempt + 1` (attempt counts from 1): 50, 100, 200 ms … with up to 50 % jitter downwards. */
export function retryDelayMs(attempt: number, random: () => number = Math.random): number {
  const base = 50 * 2 ** Math.max(0, attempt - 1);
  return Math.round(base * (1 - 0.5 * random()));
}

export type RetryDecision =
  { retry: true; delayMs: number } | { retry: false; reason: 'not_retryable' | 'attempts' | 'budget' };

/** Decides after a failed attempt, given the time left of the setup budget. */
export function decideRetry(
  code: string,
  attempt: number,
  remainingMs: number,
  random: () => number = Math.random,
): RetryDecision {
  if (!isRetryable(code)) return { retry: false, reason: 'not_retryable' };
  if (attempt >= MAX_ATTEMPTS) return { retry: false, reason: 'attempts' };
  const delayMs = retryDelayMs(attempt, random);
  // An attempt needs some time of its own after the wait; starting one doomed to time out is pointless.
  if (remainingMs - delayMs < 50) return { retry: false, reason: 'budget' };
  return { retry: true, delayMs };
}
