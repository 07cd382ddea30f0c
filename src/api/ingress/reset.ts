/**
 * Aborting a connection so the peer sees an abort: an RST, never a FIN that would read as a clean
 * end of stream. A TLS socket cannot send an RST itself (its handle is the TLS layer), so the
 * TCP socket under it is remembered here by whoever created the pair (the dialer, the ingress).
 */
import { constants, type ClientHttp2Stream, type ServerHttp2Stream } from 'node:http2';
import type { Socket } from 'node:net';
import { addAbortSignal, PassThrough } from 'node:stream';

const rawOf = new WeakMap<Socket, Socket>();
const ignore = (): void => undefined;

/** Records that `tls` runs over the TCP socket `raw`, so `resetSocket(tls)` can reset `raw`. */
export function linkRawSocket(tls: Socket, raw: Socket): void {
  if (tls !== raw) rawOf.set(tls, raw);
}

/**
 * Sends an RST to the peer (unsent data is dropped: this is an abort) and destroys the socket.
 * Safe on a socket that is already closed or still connecting (then the RST follows the connect).
 */
export function resetSocket(socket: Socket): void {
  const raw = rawOf.get(socket) ?? socket;
  // A reset of a closed handle reports ERR_SOCKET_CLOSED as an 'error'; nothing is left to abort then.
  for (const s of raw === socket ? [socket] : [raw, socket])
    if (!s.listeners('error').includes(ignore)) s.on('error', ignore);
  if (!raw.destroyed) {
    try {
      // Our FIN is on its way (end() was called, every byte is in the kernel and the shutdown
      // asked for has not completed): libuv refuses a reset then (EINVAL) and the socket would
      // never emit 'close'. Closing is all that is left: the peer gets every byte and our FIN,
      // and its next write is answered with an RST. While bytes still wait here (a slow reader)
      // Node has not asked for the shutdown yet, so the reset is still possible and a must:
      // closing would drop them and send the FIN after the part already sent, a cut stream that
      // reads as complete (test/ingress/reset.test.ts).
      if (raw.writableEnded && !raw.writableFinished && raw.writableLength === 0) raw.destroy();
      else raw.resetAndDestroy();
    } catch {
      // Not a TCP handle (a pipe in a test): a plain close is all there is.
      raw.destroy();
    }
  }
  socket.destroy();
}

const EMPTY = Buffer.alloc(0);

/**
 * Decides whether an `'end'` on `socket` was a clean end of stream. libuv reports a reset that
 * arrives while received bytes are still unread as an end of stream (POLLHUP after a partial
 * read), so an `'end'` alone may be a hidden abort. A zero-byte write asks the kernel: on a reset
 * socket it fails (ECONNRESET, EPIPE) and the socket emits `'error'`; on a half-closed one it
 * succeeds. `clean` is called only for a clean end. When our own write half is closed already
 * there is nothing left to ask: the end counts as clean.
 */
export function onCleanEnd(socket: Socket, clean: () => void): void {
  if (socket.writableEnded || socket.destroyed) {
    if (!socket.destroyed || !socket.errored) clean();
    return;
  }
  // TLS sends nothing for zero bytes: ask the TCP socket under it (a zero-byte write adds no
  // bytes to the TLS stream).
  const raw = rawOf.get(socket) ?? socket;
  if (raw.destroyed) return;
  raw.write(EMPTY, (err) => {
    if (err) socket.destroy(err);
    else clean();
  });
}

/** The error our aborted HTTP/2 streams emit, an AbortError, as before. Made once, through the public addAbortSignal. */
const STREAM_ABORT: Error = (() => {
  const probe = addAbortSignal(AbortSignal.abort(), new PassThrough());
  probe.on('error', () => undefined);
  return probe.errored ?? new Error('aborted');
})();

/**
 * Aborts an HTTP/2 stream: RST_STREAM CONNECT_ERROR (RFC 9113 §8.5, what a proxy sends when its
 * TCP connection was reset), never an END_STREAM before it (an abort stays an abort; the peer
 * would take an END_STREAM for a clean end). test/ingress/connect-error.test.ts checks the frames.
 *
 * node:http2 has no public "reset with this code" alone; three public calls in one turn make it
 * (Node 20, lib/internal/http2/core.js), and each alone lets an END_STREAM out first:
 * - `close(code)` sets the code and submits the RST_STREAM, but first ends the writable side
 *   (`closeStream` calls `stream.end()`). With no write in progress `end()` runs `_final` at once
 *   (shutdownWritable queues END_STREAM), and the RST_STREAM submit flushes the session's pending
 *   frames first (node_http2.cc `SubmitRstStream` → `SendPendingData`): END_STREAM, then RST.
 * - So a zero-byte write goes first: a Writable never calls `_final` while a write is in progress
 *   (`needFinish`), and `close` submits the reset with no END_STREAM queued.
 * - `destroy()` right after keeps it so. Left alone, that write still ends the stream: its
 *   nextTick calls shutdownWritable once the side is ending ("shutdown write stream right after
 *   last chunk", `kWriteGeneric`), and where the RST_STREAM had to wait for the session's socket
 *   (node_http2.cc `AddPendingRstStream`) the END_STREAM goes out ahead of it (seen on the wire for
 *   a quarter to a third of the streams of the test's hard case). Destroyed, the stream never calls
 *   `_final` and has no handle left to shut down; what it still had queued is dropped. Being
 *   closed already, it sends no second reset and keeps the code (`_destroy`).
 * A server stream that has not answered gets no write (a write sends the implicit `:status 200`
 * first: `kProceed` is `respond`); with no answer there is no END_STREAM to send, only the reset.
 * A stream the peer reset already (closed) is only destroyed. Our END_STREAM already sent (a
 * clean half-close that happened) stays what it was; the reset follows it.
 */
export function abortStream(stream: ClientHttp2Stream | ServerHttp2Stream): void {
  if (stream.destroyed) return;
  if (!stream.closed) {
    const unanswered = 'respond' in stream && !stream.headersSent;
    if (!unanswered && !stream.writableEnded) stream.write(EMPTY);
    stream.close(constants.NGHTTP2_CONNECT_ERROR);
  }
  stream.destroy(STREAM_ABORT);
}
