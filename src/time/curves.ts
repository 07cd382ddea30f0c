import type { BackoffOptions } from './backoff.js';

/**
 * Every retry curve of the product, named, in the one vocabulary of `BackoffOptions` (first
 * delay `initialMs`, doubling to `maxMs`, each reduced by up to `jitter` of itself, the sequence
 * starting over `resetAfterMs` after the last failure). A loop that retries takes its curve from
 * here, so the curves can be read and compared side by side.
 */

/** The sequence never starts over by itself: the loop resets it on success. */
export const NEVER_RESET = Number.MAX_SAFE_INTEGER;

/** The part of a curve a test or a benchmark may shorten. */
export type CurveBounds = Pick<BackoffOptions, 'initialMs' | 'maxMs'>;

/** `curve` with its first and longest delay replaced (tests shorten the feed's polling). */
export function withBounds(curve: BackoffOptions, bounds: CurveBounds | undefined): BackoffOptions {
  return bounds ? { ...curve, initialMs: bounds.initialMs, maxMs: bounds.maxMs } : curve;
}

// The controller.

/** A pass that threw: 1 s doubling to 30 s. */
export const PASS_CURVE: BackoffOptions = {
  initialMs: 1_000,
  maxMs: 30_000,
  jitter: 0.5,
  resetAfterMs: NEVER_RESET,
};
/** A Service whose write failed: 0.5 s doubling to 5 min, jittered; others are unaffected. */
export const SERVICE_WRITE_CURVE: BackoffOptions = {
  initialMs: 500,
  maxMs: 300_000,
  jitter: 0.25,
  resetAfterMs: NEVER_RESET,
};
/**
 * A name held by a foreign Service (or a read that failed): read again after 2 s, doubling to
 * 5 min, so one that goes away is noticed soon and one that stays costs a GET every few minutes.
 */
export const NAME_READ_CURVE: BackoffOptions = {
  initialMs: 2_000,
  maxMs: 300_000,
  jitter: 0.25,
  resetAfterMs: NEVER_RESET,
};
/** A failed write of the install record: 0.5 s doubling to 30 s. */
export const INSTALL_RECORD_WRITE_CURVE: BackoffOptions = {
  initialMs: 500,
  maxMs: 30_000,
  jitter: 0.5,
  resetAfterMs: 120_000,
};
/** Registration retries: 0.5 s doubling to 30 s, jittered. */
export const REGISTRATION_CURVE: BackoffOptions = {
  initialMs: 500,
  maxMs: 30_000,
  jitter: 0.5,
  resetAfterMs: 300_000,
};
/** Complete listings while the notification stream is down (and listings retried until done): 1 s doubling to 60 s. */
export const FEED_POLL_CURVE: BackoffOptions = {
  initialMs: 1_000,
  maxMs: 60_000,
  jitter: 0.5,
  resetAfterMs: NEVER_RESET,
};
/** Reconnects of the notification stream: 1 s doubling to 60 s, jittered. */
export const FEED_STREAM_CURVE: BackoffOptions = {
  initialMs: 1_000,
  maxMs: 60_000,
  jitter: 0.5,
  resetAfterMs: 300_000,
};
/** Retries of a deletion proof that proved nothing: 0.5 s doubling to 30 s, jittered. */
export const DELETION_PROOF_CURVE: BackoffOptions = {
  initialMs: 500,
  maxMs: 30_000,
  jitter: 0.5,
  resetAfterMs: NEVER_RESET,
};
/** `controller` waits for both APIs before registering: 0.5 s doubling to 30 s. */
export const PREFLIGHT_CURVE: BackoffOptions = {
  initialMs: 500,
  maxMs: 30_000,
  jitter: 0.2,
  resetAfterMs: 120_000,
};

// Kubernetes plumbing.

/** A cache's list or watch that failed (client-go's default manager): 0.8 s doubling to 30 s. */
export const KUBE_CACHE_CURVE: BackoffOptions = {
  initialMs: 800,
  maxMs: 30_000,
  jitter: 0.5,
  resetAfterMs: 120_000,
};

// The management API client.

/** Retries of one request: a random delay up to 0.2 s doubling to 10 s ("full jitter"). */
export const API_RETRY_CURVE: BackoffOptions = {
  initialMs: 200,
  maxMs: 10_000,
  jitter: 1,
  resetAfterMs: NEVER_RESET,
};
/** Reconnects of an event stream: in [ceiling/2, ceiling], the ceiling 250 ms doubling to 30 s. */
export const SSE_RECONNECT_CURVE: BackoffOptions = {
  initialMs: 250,
  maxMs: 30_000,
  jitter: 0.5,
  resetAfterMs: NEVER_RESET,
};

// The forwarder.

/** The delays between dial attempts of one connection: 50 ms doubling to 1 s, each reduced by up to half at random. */
export const DIAL_RETRY_CURVE: BackoffOptions = {
  initialMs: 50,
  maxMs: 1_000,
  jitter: 0.5,
  resetAfterMs: 60_000,
};
/** Checks of a refused authtoken: 2 s doubling to a minute. */
export const TOKEN_CHECK_CURVE: BackoffOptions = {
  initialMs: 2_000,
  maxMs: 60_000,
  jitter: 0.3,
  resetAfterMs: 300_000,
};
/** Checks of a transport the ingress refused: 2 s doubling to a minute. */
export const TRANSPORT_CHECK_CURVE: BackoffOptions = {
  initialMs: 2_000,
  maxMs: 60_000,
  jitter: 0.3,
  resetAfterMs: 300_000,
};
/** Rebinding a port: 100 ms doubling to 30 s; the sequence starts over after a minute without failure. */
export const REBIND_CURVE: BackoffOptions = {
  initialMs: 100,
  maxMs: 30_000,
  jitter: 0.2,
  resetAfterMs: 60_000,
};
