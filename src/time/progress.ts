import type { Clock } from './clock.js';

/** How often long work says how far it is. */
export const PROGRESS_INTERVAL_MS = 2_000;

export interface ProgressOptions {
  clock: Clock;
  /** Default PROGRESS_INTERVAL_MS. */
  everyMs?: number;
  /** How much is done now (read at each tick). */
  done(): number;
  total: number;
  /** Called every `everyMs` while the work runs; never after it settled, never for work shorter than one interval. */
  report(done: number, total: number): void;
}

/**
 * Runs `work` and reports its progress every interval on the given clock, so a first sync or an
 * uninstall of thousands of Services is not silent for seconds. Time comes from the Clock seam:
 * tests drive the ticks with a manual clock.
 */
export async function withProgress<T>(opts: ProgressOptions, work: Promise<T>): Promise<T> {
  const every = opts.everyMs ?? PROGRESS_INTERVAL_MS;
  const stop = new AbortController();
  const ticker = (async () => {
    for (;;) {
      await opts.clock.sleep(every, stop.signal);
      if (stop.signal.aborted) return;
      opts.report(opts.done(), opts.total);
    }
  })();
  try {
    return await work;
  } finally {
    stop.abort();
    await ticker;
  }
}

/** `2,000`: thousands separated, the same in every locale. */
export function formatCount(n: number): string {
  return String(Math.trunc(n)).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}
