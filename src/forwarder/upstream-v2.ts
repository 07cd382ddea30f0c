/**
 * v2: a forwarded connection as one HTTP/2 CONNECT stream (docs/ingress.md "v2"). END_STREAM is a
 * clean end, RST_STREAM an abort: an abort of ours goes out as RST_STREAM CONNECT_ERROR with no
 * END_STREAM before it (`abortStream`: node:http2's `close(code)` alone flushes an END_STREAM first,
 * which a peer can read as a clean end), and any reset from the ingress (any non-zero code) is
 * passed on as one.
 *
 * One object per idle forwarded connection, so it is a class (its methods live once on the
 * prototype; an object literal with a getter and a closure per method cost ~1 KiB of heap per
 * connection, BENCHMARKS.md "#27 round 3: idle memory"), and each stream event has one plain
 * listener shared by all streams (`on`, not `once`: each fires at most once, and `once` adds a
 * wrapper and a bound function per listener). The stream's 'error' listener of the dialer (v2-dialer.ts) keeps an
 * unwatched stream's error from throwing.
 */
import { constants, type ClientHttp2Stream } from 'node:http2';
import { abortStream } from '../api/ingress/reset.js';
import type { EarlyStream } from '../api/ingress/v2-dialer.js';
import type { Upstream, UpstreamEvents } from './upstream.js';

export function streamUpstream(early: EarlyStream): Upstream {
  return new StreamUpstream(early.stream, early.response);
}

class StreamUpstream implements Upstream {
  readonly protocol = 'v2';
  readonly early = true;
  private bytes = 0;
  private events: UpstreamEvents | undefined;
  private ended = false;
  private abortTold = false;

  constructor(
    private readonly stream: ClientHttp2Stream,
    readonly confirmed: Promise<void>,
  ) {}

  get duplex(): ClientHttp2Stream {
    return this.stream;
  }

  get gone(): boolean {
    return this.stream.destroyed || this.stream.closed;
  }

  bytesMoved(): number {
    return this.bytes + this.stream.bufferSize;
  }

  watch(events: UpstreamEvents): void {
    const stream = this.stream as WatchedStream;
    this.events = events;
    stream[UPSTREAM] = this;
    stream.on('data', onStreamData);
    stream.on('error', onStreamError);
    stream.on('aborted', onStreamAborted);
    stream.on('end', onStreamEnd);
    stream.on('close', onStreamClose);
  }

  counted(bytes: number): void {
    this.bytes += bytes;
  }

  end(): void {
    if (!this.stream.destroyed) this.stream.end();
  }

  abort(): void {
    const { stream } = this;
    // RST_STREAM CONNECT_ERROR with no END_STREAM before it (reset.ts abortStream); destroyed, too, a
    // stream with bytes still unread (its reader gone) emits its 'close'.
    abortStream(stream);
  }

  /** Decided one turn after 'end' (see onStreamEnd). */
  onEnd(): void {
    if (wasReset(this.stream)) this.tellAbort(`the ingress reset the stream (code ${this.stream.rstCode})`);
    else {
      this.ended = true;
      this.events?.cleanEnd();
    }
  }

  /** Decided one turn after 'close' (see onStreamClose). */
  onClose(): void {
    const { stream } = this;
    if (wasReset(stream)) this.tellAbort(`the ingress reset the stream (code ${stream.rstCode})`);
    else if (!this.ended && !stream.readableEnded) this.tellAbort('closed without an end of stream');
    this.events?.closed();
  }

  tellAbort(reason: string): void {
    if (this.abortTold) return;
    this.abortTold = true;
    this.events?.aborted(reason);
  }
}

/*
 * The stream's listeners, shared by every stream rather than closures per stream (an idle
 * connection keeps them for hours): an EventEmitter calls a listener with the emitter as `this`,
 * and a watched stream carries its upstream.
 */
const UPSTREAM = Symbol('the upstream watching this stream');
type WatchedStream = ClientHttp2Stream & { [UPSTREAM]?: StreamUpstream };

function onStreamData(this: WatchedStream, c: Buffer): void {
  this[UPSTREAM]?.counted(c.length);
}

function onStreamError(this: WatchedStream, err: NodeJS.ErrnoException): void {
  this[UPSTREAM]?.tellAbort(err.code ?? err.message);
}

function onStreamAborted(this: WatchedStream): void {
  this[UPSTREAM]?.tellAbort('the ingress reset the stream');
}

/**
 * A reset also ends the readable side; it is known (rstCode) by the time the close was processed,
 * so decide one turn later.
 */
function onStreamEnd(this: WatchedStream): void {
  const upstream = this[UPSTREAM];
  if (upstream) setImmediate(() => upstream.onEnd());
}

function onStreamClose(this: WatchedStream): void {
  const upstream = this[UPSTREAM];
  if (upstream) setImmediate(() => upstream.onClose());
}

function wasReset(stream: ClientHttp2Stream): boolean {
  return (stream.rstCode ?? constants.NGHTTP2_NO_ERROR) !== constants.NGHTTP2_NO_ERROR;
}
