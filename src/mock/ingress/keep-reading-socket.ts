/**
 * The socket under each HTTP/2 session of the mock ingress (binding ingress protocol v2).
 *
 * Why not the socket itself: Node's HTTP/2 session stops reading its socket while one of its own
 * writes to it is unfinished (node_http2.cc `MaybeStopReading`: a write in progress stops reads).
 * Two such sessions facing each other deadlock as soon as each has more bytes in flight towards
 * the other than the kernel buffers between them hold: each one's write waits for the other to
 * read, and neither reads until its write is done. Flow-control windows are what allows that
 * much in flight, so large windows (a few MiB per stream over TLS on loopback) hang every stream
 * of the session for good (test/ingress/v2.test.ts "both ways at once").
 *
 * Under this duplex a session's write is done as soon as its bytes are queued on the socket, up
 * to `maxQueuedBytes`, so the session keeps reading while the peer is slow to take its bytes.
 * What the queue can hold is bounded by the peer's own flow control (DATA is sent only into the
 * peer's connection window) plus control frames; `maxQueuedBytes` bounds it against a peer that
 * never reads: beyond it the write waits for the socket to drain, as Node's own does.
 *
 * One side that keeps reading is enough to break the deadlock, so the forwarder's pool keeps its
 * plain socket; a real ingress that reads while it writes needs nothing from it.
 */
import { Duplex } from 'node:stream';
import type { Socket } from 'node:net';

export class KeepReadingSocket extends Duplex {
  constructor(
    private readonly socket: Socket,
    private readonly maxQueuedBytes: number,
  ) {
    super({ allowHalfOpen: true });
    socket.on('data', (chunk: Buffer) => {
      if (!this.push(chunk)) socket.pause();
    });
    socket.once('end', () => this.push(null));
    socket.on('error', (err) => this.destroy(err));
    socket.once('close', () => this.destroy());
  }

  /** The peer's address, as the session's socket reports it (the ingress logs the source). */
  get remoteAddress(): string | undefined {
    return this.socket.remoteAddress;
  }

  override _read(): void {
    this.socket.resume();
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (err?: Error | null) => void): void {
    this.socket.write(chunk);
    if (this.socket.writableLength <= this.maxQueuedBytes) done();
    else this.socket.once('drain', () => done());
  }

  override _final(done: (err?: Error | null) => void): void {
    this.socket.end();
    done();
  }

  override _destroy(err: Error | null, done: (err?: Error | null) => void): void {
    this.socket.destroy(err ?? undefined);
    done(err);
  }
}

/**
 * How much one session may queue on its socket before its writes wait: at least what the peer's
 * connection window lets it send (sixteen stream windows, when both sides use one size), and
 * never below 64 MiB, so a peer with a larger window than ours does not bring the stall back.
 */
export function writeQueueCap(sessionWindowBytes: number): number {
  return Math.max(64 * 1024 * 1024, sessionWindowBytes);
}
