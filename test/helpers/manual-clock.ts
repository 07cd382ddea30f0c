import type { Clock } from '../../src/time/clock.js';

interface Sleeper {
  due: number;
  seq: number;
  resolve: () => void;
}

/**
 * A clock that moves only when the test says so: `sleep` resolves once `advance` has moved time
 * past its deadline (or its signal aborts). `random` is fixed, so jittered delays are exact.
 */
export class ManualClock implements Clock {
  private t: number;
  private seq = 0;
  private readonly sleepers = new Set<Sleeper>();
  /** Every delay asked for, in order. */
  readonly sleeps: number[] = [];

  constructor(
    start = Date.UTC(2026, 0, 1),
    private readonly fixedRandom = 0,
  ) {
    this.t = start;
  }

  now(): number {
    return this.t;
  }

  random(): number {
    return this.fixedRandom;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    this.sleeps.push(ms);
    if (signal?.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const s: Sleeper = {
        due: this.t + Math.max(0, ms),
        seq: this.seq++,
        resolve: () => {
          signal?.removeEventListener('abort', onAbort);
          this.sleepers.delete(s);
          resolve();
        },
      };
      const onAbort = (): void => s.resolve();
      signal?.addEventListener('abort', onAbort, { once: true });
      this.sleepers.add(s);
    });
  }

  /** Sleeps still pending. */
  get pending(): number {
    return this.sleepers.size;
  }

  /** Moves time forward by `ms`, waking sleepers in deadline order and letting their callbacks run. */
  async advance(ms: number): Promise<void> {
    const end = this.t + ms;
    for (;;) {
      await settle();
      const next = [...this.sleepers]
        .filter((s) => s.due <= end)
        .sort((a, b) => a.due - b.due || a.seq - b.seq)[0];
      if (!next) break;
      this.t = Math.max(this.t, next.due);
      next.resolve();
    }
    this.t = end;
    await settle();
  }
}

/** Lets pending promise callbacks run. */
export async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await Promise.resolve();
  await new Promise((r) => setImmediate(r));
}
