/** Reading the preface line from a fresh ingress connection and answering with the reply line. */
import type { Socket } from 'node:net';
import {
  encodeLine,
  LineReader,
  MAX_PREFACE_BYTES,
  parsePreface,
  type IngressPreface,
} from '../../api/ingress/protocol.js';
import type { IngressErrorCode } from '../../api/error-codes/ingress.js';
import { H2_PREFACE } from '../../api/ingress/v2-protocol.js';

export const EVICTED_MSG = 'evicted: too many connections are waiting for their handshake or preface; retry';

export type PrefaceOutcome =
  /** `rest`: bytes the client sent after the newline; they belong to the stream. */
  | { kind: 'preface'; preface: IngressPreface; rest: Buffer }
  | { kind: 'error'; code: IngressErrorCode; msg: string }
  /** The client went away before finishing the line; there is nobody to answer. */
  | { kind: 'closed' }
  /** The client speaks HTTP/2 with prior knowledge (h2c, v2): `head` are the bytes read so far. */
  | { kind: 'h2c'; head: Buffer };

/**
 * Reads the preface. Resolves exactly once; on every outcome the socket is paused with no
 * listeners of ours left on it, so the caller decides what happens next. `evicted` aborts the
 * wait with ERR_742 (the ingress needed the slot for a newer connection).
 */
export function readPreface(
  socket: Socket,
  timeoutMs: number,
  evicted?: AbortSignal,
): Promise<PrefaceOutcome> {
  return new Promise((resolve) => {
    const reader = new LineReader(MAX_PREFACE_BYTES);
    let settled = false;
    const finish = (outcome: PrefaceOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.off('data', onData);
      socket.off('end', onClosed);
      socket.off('close', onClosed);
      socket.off('error', onClosed);
      evicted?.removeEventListener('abort', onEvicted);
      socket.pause();
      resolve(outcome);
    };
    let first = true;
    const onData = (chunk: Buffer) => {
      // A TLS ClientHello (a handshake record: 0x16, version 3.x) on the plain port: a client
      // configured for TLS. Said at once, not after the preface timeout.
      if (first && chunk.length >= 2 && chunk[0] === 0x16 && chunk[1] === 0x03) {
        finish({
          kind: 'error',
          code: 'ERR_700',
          msg: 'this is a TLS ClientHello, and this ingress listens without TLS (plain TCP)',
        });
        return;
      }
      first = false;
      // "PRI * HTTP/2.0": a v2 client on the plain port. Its preface can arrive split; its first
      // 3 bytes ("PRI") already tell it apart from a JSON line.
      if (chunk.length >= 3 && chunk.subarray(0, 3).equals(H2_PREFACE.subarray(0, 3))) {
        finish({ kind: 'h2c', head: chunk });
        return;
      }
      const r = reader.push(chunk);
      if (r.kind === 'more') return;
      if (r.kind === 'too_long') {
        finish({
          kind: 'error',
          code: 'ERR_701',
          msg: `the preface line is longer than ${MAX_PREFACE_BYTES} bytes`,
        });
        return;
      }
      const parsed = parsePreface(r.line);
      finish(
        parsed.ok
          ? { kind: 'preface', preface: parsed.value, rest: r.rest }
          : { kind: 'error', code: parsed.code, msg: parsed.msg },
      );
    };
    const onClosed = () => finish({ kind: 'closed' });
    const onEvicted = () => finish({ kind: 'error', code: 'ERR_742', msg: EVICTED_MSG });
    const timer = setTimeout(
      () =>
        finish({
          kind: 'error',
          code: 'ERR_704',
          msg: `no complete preface line within ${timeoutMs} ms`,
        }),
      timeoutMs,
    );
    socket.on('data', onData);
    socket.on('end', onClosed);
    socket.on('close', onClosed);
    socket.on('error', onClosed);
    if (evicted?.aborted) return onEvicted();
    evicted?.addEventListener('abort', onEvicted, { once: true });
    socket.resume();
  });
}

/**
 * Answers `{"ok":false,...}` and closes politely: our write half ends at once, and whatever the
 * client still sends is read and dropped until it closes too (or `lingerMs` passes). Destroying
 * right away could reset the connection before the client has read the reply.
 */
export function rejectConnection(socket: Socket, code: IngressErrorCode, msg: string, lingerMs = 2000): void {
  if (socket.destroyed) return;
  socket.on('error', () => socket.destroy());
  socket.on('data', () => undefined);
  const timer = setTimeout(() => socket.destroy(), lingerMs);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
  socket.end(encodeLine({ ok: false, code, msg }));
  socket.resume();
}
