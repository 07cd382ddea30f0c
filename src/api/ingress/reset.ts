/**
 * Aborting a connection so the peer sees an abort: an RST, never a FIN that would read as a clean
 * end of stream. A TLS socket cannot send an RST itself (its handle is the TLS layer), so the
 * TCP socket under it is remembered here by whoever created the pair (the dialer, the ingress).
 */
import type { Socket } from 'node:net';
import { addAbortSignal, PassThrough, type Duplex } from 'node:stream';

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

/**
 * An HTTP/2 stream's AbortError: `destroy()` with it sends RST_STREAM CANCEL (node:http2 maps an
 * AbortError to CANCEL, any other error to INTERNAL_ERROR) and, the writable side being errored,
 * no END_STREAM before it. `stream.close(code)` ends the writable side first, and node:http2
 * flushes that END_STREAM before the RST_STREAM: where the session's socket has a write in
 * progress the two can arrive in different reads, and the peer would take the END_STREAM for a
 * clean end. Made once, through the public addAbortSignal.
 */
const STREAM_ABORT: Error = (() => {
  const probe = addAbortSignal(AbortSignal.abort(), new PassThrough());
  probe.on('error', () => undefined);
  return probe.errored ?? new Error('aborted');
})();

/** Aborts an HTTP/2 stream: RST_STREAM CANCEL, never an END_STREAM before it (an abort stays an abort). */
export function abortStream(stream: Duplex): void {
  if (!stream.destroyed) stream.destroy(STREAM_ABORT);
}
