import type { BackoffOptions } from './backoff.js';

/**
 * Every retry curve of the product, named, in the one vocabulary of `BackoffOptions` (first
 * delay `initialMs`, doubling to `maxMs`, each reduced by up to `jitter` of itself, the sequence
 * starting over `resetAfterMs` after the last failure). A loop that retries takes its curve from
 * here, so the curves can be read and compared side by side.
 */

/** The sequence never starts over by itself: the loop resets it on success. */
export const NEVER_RESET = Number.MAX_SAFE_INTEGER;

/** A curve, its values in the order of the vocabulary: first delay, longest, jitter, starts over after. */
function curve(initialMs: number, maxMs: number, jitter: number, resetAfterMs: number): BackoffOptions {
  return { initialMs, maxMs, jitter, resetAfterMs };
}

/** The part of a curve a test or a benchmark may shorten. */
export type CurveBounds = Pick<BackoffOptions, 'initialMs' | 'maxMs'>;

/** `base` with its first and longest delay replaced (tests shorten the feed's polling). */
export function withBounds(base: BackoffOptions, bounds: CurveBounds | undefined): BackoffOptions {
  return bounds ? { ...base, initialMs: bounds.initialMs, maxMs: bounds.maxMs } : base;
}

// The controller.

/** A pass that threw: 1 s doubling to 30 s. */
export const PASS_CURVE = curve(1_000, 30_000, 0.5, NEVER_RESET);
/** A Service whose write failed: 0.5 s doubling to 5 min, jittered; others are unaffected. */
export const SERVICE_WRITE_CURVE = curve(500, 300_000, 0.25, NEVER_RESET);
/**
 * A name held by a foreign Service (or a read that failed): read again after 2 s, doubling to
 * 5 min, so one that goes away is noticed soon and one that stays costs a GET every few minutes.
 */
export const NAME_READ_CURVE = curve(2_000, 300_000, 0.25, NEVER_RESET);
/** A failed write of the install record: 0.5 s doubling to 30 s. */
export const INSTALL_RECORD_WRITE_CURVE = curve(500, 30_000, 0.5, 120_000);
/** Registration retries: 0.5 s doubling to 30 s, jittered. */
export const REGISTRATION_CURVE = curve(500, 30_000, 0.5, 300_000);
/** Complete listings while the notification stream is down (and listings retried until done): 1 s doubling to 60 s. */
export const FEED_POLL_CURVE = curve(1_000, 60_000, 0.5, NEVER_RESET);
/** Reconnects of the notification stream: 1 s doubling to 60 s, jittered. */
export const FEED_STREAM_CURVE = curve(1_000, 60_000, 0.5, 300_000);
/** Retries of a deletion proof that proved nothing: 0.5 s doubling to 30 s, jittered. */
export const DELETION_PROOF_CURVE = curve(500, 30_000, 0.5, NEVER_RESET);
/** `controller` waits for both APIs before registering: 0.5 s doubling to 30 s. */
export const PREFLIGHT_CURVE = curve(500, 30_000, 0.2, 120_000);

// Kubernetes plumbing.

/** A cache's list or watch that failed (client-go's default manager): 0.8 s doubling to 30 s. */
export const KUBE_CACHE_CURVE = curve(800, 30_000, 0.5, 120_000);

// The management API client.

/** Retries of one request: a random delay up to 0.2 s doubling to 10 s ("full jitter"). */
export const API_RETRY_CURVE = curve(200, 10_000, 1, NEVER_RESET);
/** Reconnects of an event stream: in [ceiling/2, ceiling], the ceiling 250 ms doubling to 30 s. */
export const SSE_RECONNECT_CURVE = curve(250, 30_000, 0.5, NEVER_RESET);

// The forwarder.

/** The delays between dial attempts of one connection: 50 ms doubling to 1 s, each reduced by up to half at random. */
export const DIAL_RETRY_CURVE = curve(50, 1_000, 0.5, 60_000);
/** Checks of a refused authtoken: 2 s doubling to a minute. */
export const TOKEN_CHECK_CURVE = curve(2_000, 60_000, 0.3, 300_000);
/** Checks of a transport the ingress refused: 2 s doubling to a minute. */
export const TRANSPORT_CHECK_CURVE = curve(2_000, 60_000, 0.3, 300_000);
/** Rebinding a port: 100 ms doubling to 30 s; the sequence starts over after a minute without failure. */
export const REBIND_CURVE = curve(100, 30_000, 0.2, 60_000);
