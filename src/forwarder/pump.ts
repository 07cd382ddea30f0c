/**
 * One direction of a forwarded connection: `from`'s bytes written to `to` with backpressure, as
 * `from.pipe(to, { end: false })` would, without what pipe() keeps per pipe for as long as the
 * connection is open (nine closures, two `once` wrappers, its state; ~1.2 KiB of heap per
 * direction, BENCHMARKS.md "#27 round 3: idle memory"): one object and two handlers.
 *
 * Ends, errors and closes are not its business: the connection watches both sides (a FIN is
 * passed on only once it is known to be one, an abort resets the other side), so, like the pipe
 * it replaces, it never ends `to`.
 */
import type { Readable, Writable } from 'node:stream';

export class Pump {
  private stopped = false;

  constructor(
    private readonly from: Readable,
    private readonly to: Writable,
  ) {
    from.on('data', this.onData);
    // pipe() does the same: a destination already over its high-water mark waits for 'drain'.
    if (to.writableNeedDrain) this.waitForDrain();
  }

  /** Stops moving bytes (the pipe's unpipe); what `from` still holds stays there. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.from.off('data', this.onData);
    this.to.off('drain', this.onDrain);
  }

  private readonly onData = (chunk: Buffer): void => {
    // A destination torn down meanwhile takes no more (the connection resets both sides).
    if (this.to.destroyed) return this.stop();
    if (!this.to.write(chunk)) this.waitForDrain();
  };

  private readonly onDrain = (): void => {
    if (!this.stopped) this.from.resume();
  };

  private waitForDrain(): void {
    this.from.pause();
    this.to.once('drain', this.onDrain);
  }
}
