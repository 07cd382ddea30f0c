/** Byte piping between an accepted ingress connection and its upstream, half-close respected. */
import type { Socket } from 'node:net';
import { onCleanEnd, resetSocket } from '../../api/ingress/reset.js';

export type PipeOutcome = 'closed' | 'idle_timeout' | 'client_error' | 'upstream_error' | 'shutdown';

export interface PipeResult {
  /** Bytes from the client to the upstream (including bytes that followed the preface). */
  bytesIn: number;
  /** Bytes from the upstream to the client. */
  bytesOut: number;
  outcome: PipeOutcome;
  /** The socket error behind `client_error` / `upstream_error`. */
  error?: string;
}

export interface Piping {
  done: Promise<PipeResult>;
  /** Tears both sides down now (server shutdown). */
  abort(): void;
}

interface Side {
  socket: Socket;
  readEnded: boolean;
  writeFinished: boolean;
  closed: boolean;
}

/**
 * Pipes `client` ⇄ `upstream`. When one side ends its write half, the other side's write half is
 * ended after the data before it is delivered, and the opposite direction keeps flowing until it
 * ends too. Both sockets must have been created with `allowHalfOpen: true`. A socket error, an
 * abrupt close or `idleTimeoutMs` without traffic in either direction resets both sides.
 */
export function pipeBoth(client: Socket, upstream: Socket, idleTimeoutMs: number, initial?: Buffer): Piping {
  const c: Side = { socket: client, readEnded: false, writeFinished: false, closed: false };
  const u: Side = { socket: upstream, readEnded: false, writeFinished: false, closed: false };
  const result: PipeResult = { bytesIn: 0, bytesOut: 0, outcome: 'closed' };
  let failed = false;
  let resolveDone!: (r: PipeResult) => void;
  const done = new Promise<PipeResult>((r) => (resolveDone = r));

  const fail = (outcome: PipeOutcome, error?: string) => {
    if (!failed && result.outcome === 'closed') {
      result.outcome = outcome;
      if (error) result.error = error;
    }
    failed = true;
    // An abort on one side is passed on as an abort (RST), never as a FIN that reads as a clean end.
    resetSocket(client);
    resetSocket(upstream);
  };

  const pump = (src: Side, dst: Side, count: (n: number) => void) => {
    src.socket.on('data', (chunk: Buffer) => {
      count(chunk.length);
      if (!dst.socket.write(chunk)) src.socket.pause();
    });
    dst.socket.on('drain', () => src.socket.resume());
    const onEnd = () => {
      src.readEnded = true;
      // A reset read as an end (see onCleanEnd) fails the probe with an 'error': both sides reset.
      onCleanEnd(src.socket, () => dst.socket.end());
    };
    // A paused socket whose buffer is empty still emits 'end' when the FIN arrives, so the
    // client may have ended before piping started (preface, data and FIN all at once).
    if (src.socket.readableEnded) onEnd();
    else src.socket.on('end', onEnd);
  };

  const watch = (side: Side, other: Side, errorOutcome: PipeOutcome) => {
    side.socket.setTimeout(idleTimeoutMs, () => fail('idle_timeout'));
    side.socket.on('finish', () => (side.writeFinished = true));
    side.socket.on('error', (err: NodeJS.ErrnoException) => fail(errorOutcome, err.code ?? err.message));
    side.socket.on('close', () => {
      side.closed = true;
      // A close before both halves ended cleanly means the peer vanished: drop the other side too.
      // After a clean close the other side is left to flush what it still holds and close itself.
      if (!side.readEnded || !side.writeFinished) fail(errorOutcome, 'closed abruptly');
      if (other.closed) {
        client.setTimeout(0);
        upstream.setTimeout(0);
        resolveDone(result);
      }
    });
  };

  watch(c, u, 'client_error');
  watch(u, c, 'upstream_error');
  if (initial && initial.length > 0) {
    result.bytesIn += initial.length;
    upstream.write(initial);
  }
  pump(c, u, (n) => (result.bytesIn += n));
  pump(u, c, (n) => (result.bytesOut += n));
  client.resume();
  upstream.resume();
  return { done, abort: () => fail('shutdown') };
}
