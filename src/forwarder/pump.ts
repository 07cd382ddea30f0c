/**
 * One direction of a forwarded connection: `from`'s bytes written to `to` with backpressure, as
 * `from.pipe(to, { end: false })` would, without what pipe() keeps per pipe for as long as the
 * connection is open (nine closures, two `once` wrappers, its state; ~1.2 KiB of heap per
 * direction, BENCHMARKS.md "#27 round 3: idle memory").
 *
 * The listeners are shared functions, not closures per pump: an EventEmitter calls a listener
 * with the emitter as `this`, and each stream carries the pump it feeds and the pump waiting for
 * its 'drain' (a forwarded connection's two streams are each the source of one pump and the
 * destination of the other).
 *
 * Ends, errors and closes are not its business: the connection watches both sides (a FIN is
 * passed on only once it is known to be one, an abort resets the other side), so, like the pipe
 * it replaces, it never ends `to`.
 */
import type { Readable, Writable } from 'node:stream';

const FEEDS = Symbol('the pump reading from this stream');
const DRAINS = Symbol('the pump writing to this stream');

type Source = Readable & { [FEEDS]?: Pump | undefined };
type Destination = Writable & { [DRAINS]?: Pump | undefined };

function onData(this: Source, chunk: Buffer): void {
  this[FEEDS]?.move(chunk);
}

function onDrain(this: Destination): void {
  this[DRAINS]?.drained();
}

export class Pump {
  private stopped = false;

  constructor(
    private readonly from: Source,
    private readonly to: Destination,
  ) {
    from[FEEDS] = this;
    to[DRAINS] = this;
    from.on('data', onData);
    // pipe() does the same: a destination already over its high-water mark waits for 'drain'.
    if (to.writableNeedDrain) this.waitForDrain();
  }

  /** Stops moving bytes (the pipe's unpipe); what `from` still holds stays there. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.from.off('data', onData);
    this.to.off('drain', onDrain);
    this.from[FEEDS] = undefined;
    this.to[DRAINS] = undefined;
  }

  move(chunk: Buffer): void {
    // A destination torn down meanwhile takes no more (the connection resets both sides).
    if (this.to.destroyed) return this.stop();
    if (!this.to.write(chunk)) this.waitForDrain();
  }

  drained(): void {
    if (!this.stopped) this.from.resume();
  }

  private waitForDrain(): void {
    this.from.pause();
    this.to.once('drain', onDrain);
  }
}
