import type { CancelSignal } from '../api/ingress/cancel.js';

/**
 * Bounds the ingress connections being opened at once. A burst of clients would otherwise open
 * as many TLS handshakes as there are clients, and the ingress, which caps handshakes per source
 * address (ERR_743) and in all (ERR_742), would turn most of them away; waiting here in order
 * costs the client less than a refusal and a retry.
 */
export class DialGate {
  private running = 0;
  private readonly queue: { grant: () => void }[] = [];

  constructor(private readonly max: number) {}

  /** Dials running now. */
  get active(): number {
    return this.running;
  }

  /** Connections waiting for their turn. */
  get waiting(): number {
    return this.queue.length;
  }

  /**
   * Resolves with the release function once a slot is free, or undefined when `signal` aborts or
   * `timeoutMs` passes first. Release exactly once.
   */
  acquire(signal: CancelSignal, timeoutMs: number): Promise<(() => void) | undefined> {
    if (signal.aborted) return Promise.resolve(undefined);
    if (this.running < this.max) {
      this.running++;
      return Promise.resolve(this.releaser());
    }
    return new Promise((resolve) => {
      const entry = {
        grant: () => {
          clearTimeout(timer);
          signal.removeEventListener('abort', onGiveUp);
          resolve(this.releaser());
        },
      };
      const onGiveUp = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onGiveUp);
        const i = this.queue.indexOf(entry);
        if (i >= 0) this.queue.splice(i, 1);
        resolve(undefined);
      };
      const timer = setTimeout(onGiveUp, Math.max(1, Math.round(timeoutMs)));
      signal.addEventListener('abort', onGiveUp, { once: true });
      this.queue.push(entry);
    });
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.queue.shift();
      if (next) next.grant();
      else this.running--;
    };
  }
}

/** A counter with a ceiling: the per-port silent dials. */
export class SlotCounter {
  private used = 0;

  constructor(private readonly max: number) {}

  get count(): number {
    return this.used;
  }

  tryAcquire(): boolean {
    if (this.used >= this.max) return false;
    this.used++;
    return true;
  }

  release(): void {
    if (this.used > 0) this.used--;
  }
}
