/**
 * Pure: which failed ingress attempts are worth another try for the same client connection,
 * and how long to wait. The client is waiting on an open TCP connection, so the budget is short
 * (bounded by `limits.prefaceTimeoutMs` and `limits.maxDialAttempts`); conditions that last (bad
 * token, unknown URL, no upstream, a refused certificate) are not retried at all.
 */
import { applyJitter, baseDelay } from '../time/backoff.js';
import { DIAL_RETRY_CURVE } from '../time/curves.js';
import { DOWN_PORT_DIALS } from './upstream-verdict.js';

/** Attempts per client connection when the config does not say (`limits.maxDialAttempts`). */
export const DEFAULT_MAX_ATTEMPTS = 6;

/**
 * Retryable: the ingress's transient refusals (preface timeout, upstream refused or unreachable,
 * at capacity, shutting down, evicted or too many handshakes from this source, internal error)
 * and the dialer's transport failures (closed or reset before replying, the TLS handshake closed,
 * no reply in time, could not connect). Not retried: protocol or credential errors
 * (ERR_700–ERR_720), unknown endpoint or missing upstream (ERR_721, ERR_722: they last longer than
 * a client waits), loops and own listeners (ERR_732, ERR_733), a malformed reply (ERR_792), an
 * abort (ERR_794) and a refused certificate (ERR_795).
 */
const RETRYABLE = new Set([
  'ERR_704',
  'ERR_730',
  'ERR_731',
  'ERR_740',
  'ERR_741',
  'ERR_742',
  'ERR_743',
  'ERR_744',
  'ERR_750',
  'ERR_790',
  'ERR_791',
  'ERR_793',
]);

/** Evicted to make room for a newer handshake: the ingress says "retry at once", so only a short spread. */
const AT_ONCE = new Set(['ERR_742']);

/** The ingress reached out and the endpoint's upstream was not there (refused, unreachable). */
const UPSTREAM_DOWN = new Set(['ERR_730', 'ERR_731']);

/** Whether the ingress's answer `code` says the endpoint's upstream is down (upstream-verdict.ts). */
export function saysUpstreamDown(code: string): boolean {
  return UPSTREAM_DOWN.has(code);
}

export function isRetryable(code: string): boolean {
  return RETRYABLE.has(code);
}

/** Delay before attempt `attempt + 1` (attempt counts from 1): 50, 100, 200 … 1000 ms, jittered downwards. */
export function retryDelayMs(attempt: number, random: () => number = Math.random, code = ''): number {
  const base = AT_ONCE.has(code)
    ? DIAL_RETRY_CURVE.initialMs
    : baseDelay(Math.max(0, attempt - 1), DIAL_RETRY_CURVE);
  return applyJitter(base, DIAL_RETRY_CURVE.jitter, random());
}

export type RetryDecision =
  { retry: true; delayMs: number } | { retry: false; reason: 'not_retryable' | 'attempts' | 'budget' };

/** Decides after a failed attempt, given the time left of the setup budget. */
export function decideRetry(
  code: string,
  attempt: number,
  remainingMs: number,
  random: () => number = Math.random,
  maxAttempts = DEFAULT_MAX_ATTEMPTS,
): RetryDecision {
  if (!isRetryable(code)) return { retry: false, reason: 'not_retryable' };
  if (attempt >= maxAttempts) return { retry: false, reason: 'attempts' };
  const delayMs = retryDelayMs(attempt, random, code);
  // An attempt needs some time of its own after the wait; starting one doomed to time out is pointless.
  if (remainingMs - delayMs < 50) return { retry: false, reason: 'budget' };
  return { retry: true, delayMs };
}

/**
 * How much of a client's timeouts (`limits.prefaceTimeoutMs`, `limits.dialTimeoutMs`) is drawn at
 * random: each fires somewhere in the last tenth of its span. Clients that arrived together (a
 * crowd of one endpoint's clients waiting on its dead upstream) would otherwise all give up in
 * the same instant, and their hundreds of resets, log lines and reconnects run in one turn of the
 * event loop ahead of every other endpoint's clients (BENCHMARKS.md "#27 round 4: isolation").
 */
export const TIMEOUT_SPREAD = 0.1;

/** `ms` shortened by up to TIMEOUT_SPREAD of it; never longer than configured. */
export function spreadTimeout(ms: number, random: () => number): number {
  return ms * (1 - TIMEOUT_SPREAD * Math.min(1, Math.max(0, random())));
}

/** One attempt's timeout: `limits.dialTimeoutMs` spread, within what is left of the client's deadline; at least 1 ms. */
export function attemptTimeoutMs(dialTimeoutMs: number, remainingMs: number, random: () => number): number {
  return Math.max(1, Math.round(Math.min(spreadTimeout(dialTimeoutMs, random), remainingMs)));
}

/**
 * Why a queued client gave up without a turn, in the figures that applied to it: its own deadline
 * is `limits.prefaceTimeoutMs` spread over its last tenth (spreadTimeout), and the gate gives up
 * before it when too little time is left for a dial to finish.
 */
export function noTurnMessage(
  waitedMs: number,
  deadlineMs: number,
  limits: { prefaceTimeoutMs: number },
  upstreamDown = false,
): string {
  const why = upstreamDown
    ? `; this endpoint's upstream was down at its latest dials (ERR_730/731), so it has ${DOWN_PORT_DIALS} dials at a time awaiting the ingress's answer until one reaches the upstream`
    : '';
  return `no turn to dial the ingress after waiting ${Math.round(waitedMs)} ms of this client's ${Math.round(deadlineMs)} ms (limits.prefaceTimeoutMs ${limits.prefaceTimeoutMs} ms, spread over its last tenth)${why}`;
}
