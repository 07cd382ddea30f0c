/**
 * What the dialer needs of an abort signal. An AbortSignal is one; `Cancellation` is another that
 * costs almost nothing: in Node 20 an AbortSignal costs tens of microseconds per connection once
 * its garbage collection is counted (BENCHMARKS.md, "#15: round 4"), more than the forwarder's
 * own work on a short connection.
 */
export interface CancelSignal {
  readonly aborted: boolean;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

/** A one-shot cancellation: `abort()` calls each listener added before it once. */
export class Cancellation implements CancelSignal {
  private done = false;
  private listeners: (() => void)[] | undefined;

  get aborted(): boolean {
    return this.done;
  }

  addEventListener(_type: 'abort', listener: () => void): void {
    if (this.done) return;
    (this.listeners ??= []).push(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    const i = this.listeners?.indexOf(listener) ?? -1;
    if (i >= 0) this.listeners!.splice(i, 1);
  }

  abort(): void {
    if (this.done) return;
    this.done = true;
    const listeners = this.listeners;
    this.listeners = undefined;
    if (listeners) for (const l of listeners) l();
  }

  /** An AbortSignal that follows this cancellation, for APIs that need a real one (rare paths). */
  toAbortSignal(): AbortSignal {
    const ctl = new AbortController();
    if (this.done) ctl.abort();
    else this.addEventListener('abort', () => ctl.abort());
    return ctl.signal;
  }
}
