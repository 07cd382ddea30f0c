/**
 * Time, sleeping and randomness behind one seam so that backoff, watchdogs and leader election
 * can be driven by tests without real waiting.
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Resolves after `ms`, or as soon as `signal` aborts (it never rejects). */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /** A number in [0, 1); used for jitter. */
  random(): number;
}

/**
 * A clock that can also measure elapsed time without ever jumping. Leader election needs it:
 * a deadline measured on wall time can be stretched by an NTP step or a manual clock change.
 */
export interface MonotonicClock extends Clock {
  /** Milliseconds on a clock that only moves forward (`performance.now()`); compare only with itself. */
  monotonicNow(): number;
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) {
      resolve();
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(
      () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      },
      Math.max(0, ms),
    );
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

export const systemClock: MonotonicClock = {
  now: () => Date.now(),
  monotonicNow: () => performance.now(),
  sleep,
  random: () => Math.random(),
};
