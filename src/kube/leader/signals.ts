import type { Clock } from '../../time/clock.js';

export interface LinkedSignal {
  signal: AbortSignal;
  /** Detaches from the parents and cancels the timer; call once the guarded work is over. */
  dispose(): void;
}

/**
 * A signal that aborts when any parent aborts or, with `timeout`, after `timeout.ms` on
 * `timeout.clock` (so fake clocks drive request deadlines too). Unlike `AbortSignal.any` it
 * detaches from long-lived parents on `dispose()`, so a loop that makes one per attempt for days
 * does not accumulate listeners.
 */
export function linkedSignal(
  parents: readonly AbortSignal[],
  timeout?: { clock: Clock; ms: number; reason: string },
): LinkedSignal {
  const ctl = new AbortController();
  const detach: (() => void)[] = [];
  const dispose = (): void => {
    for (const d of detach.splice(0)) d();
  };
  for (const p of parents) {
    if (p.aborted) {
      ctl.abort(p.reason);
      break;
    }
    const onAbort = (): void => {
      dispose();
      ctl.abort(p.reason);
    };
    p.addEventListener('abort', onAbort, { once: true });
    detach.push(() => p.removeEventListener('abort', onAbort));
  }
  if (timeout && !ctl.signal.aborted) {
    const timer = new AbortController();
    detach.push(() => timer.abort());
    void timeout.clock.sleep(Math.max(0, timeout.ms), timer.signal).then(() => {
      if (timer.signal.aborted) return;
      dispose();
      const e = new Error(timeout.reason);
      e.name = 'TimeoutError';
      ctl.abort(e);
    });
  }
  if (ctl.signal.aborted) dispose();
  return { signal: ctl.signal, dispose };
}
