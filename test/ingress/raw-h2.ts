/**
 * A raw HTTP/2 peer for frame-level tests: a plain TCP socket that speaks just enough HTTP/2
 * (RFC 9113) to face node:http2 and records every frame it receives (type, flags, stream id, the
 * RST_STREAM error code), so a test can assert what went out on the wire, in order, rather than
 * what node:http2 reports on the other side. It never decodes HPACK: it only writes the few
 * header blocks it needs, as literals.
 */
import type { Socket } from 'node:net';

export const FRAME = {
  DATA: 0x0,
  HEADERS: 0x1,
  RST_STREAM: 0x3,
  SETTINGS: 0x4,
  PING: 0x6,
  GOAWAY: 0x7,
  WINDOW_UPDATE: 0x8,
} as const;
export const FLAG = { END_STREAM: 0x1, ACK: 0x1, END_HEADERS: 0x4 } as const;
/** SETTINGS_INITIAL_WINDOW_SIZE (RFC 9113 §6.5.2). */
const SETTINGS_INITIAL_WINDOW_SIZE = 0x4;
export const MAX_WINDOW = 2 ** 31 - 1;
/** The default window of a connection and a stream (RFC 9113 §6.9.2). */
const DEFAULT_WINDOW = 65_535;
export const CLIENT_PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

/** One received frame; a DATA frame's payload is counted, not kept. */
export interface Frame {
  type: number;
  flags: number;
  stream: number;
  length: number;
  /** RST_STREAM's and GOAWAY's error code. */
  code?: number;
}

function frame(type: number, flags: number, stream: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  const head = Buffer.alloc(9);
  head.writeUIntBE(payload.length, 0, 3);
  head.writeUInt8(type, 3);
  head.writeUInt8(flags, 4);
  head.writeUInt32BE(stream & 0x7fffffff, 5);
  return Buffer.concat([head, payload]);
}

/** SETTINGS with INITIAL_WINDOW_SIZE = `window` (none when it is the default). */
export function settings(window: number): Buffer {
  if (window === DEFAULT_WINDOW) return frame(FRAME.SETTINGS, 0, 0);
  const entry = Buffer.alloc(6);
  entry.writeUInt16BE(SETTINGS_INITIAL_WINDOW_SIZE, 0);
  entry.writeUInt32BE(window, 2);
  return frame(FRAME.SETTINGS, 0, 0, entry);
}

export function windowUpdate(stream: number, increment: number): Buffer {
  const payload = Buffer.alloc(4);
  payload.writeUInt32BE(increment, 0);
  return frame(FRAME.WINDOW_UPDATE, 0, stream, payload);
}

/** An HPACK literal header field without indexing, its name taken from the static table. */
function literal(nameIndex: number, value: string): Buffer {
  const bytes = Buffer.from(value, 'latin1');
  return Buffer.concat([Buffer.from([nameIndex, bytes.length]), bytes]);
}

/** HEADERS opening a CONNECT stream to `authority` (RFC 9113 §8.5): `:method` and `:authority` only. */
export function connectHeaders(stream: number, authority: string): Buffer {
  // Static table: 1 `:authority`, 2 `:method`.
  const block = Buffer.concat([literal(2, 'CONNECT'), literal(1, authority)]);
  return frame(FRAME.HEADERS, FLAG.END_HEADERS, stream, block);
}

/** HEADERS answering `:status 200` (static table entry 8, indexed), without END_STREAM. */
export function okHeaders(stream: number): Buffer {
  return frame(FRAME.HEADERS, FLAG.END_HEADERS, stream, Buffer.from([0x88]));
}

/**
 * Reads frames off `socket` (after the preface, which the caller consumed or never gets) and
 * answers what the protocol requires: SETTINGS with an ACK, PING with a PING ACK. Every frame is
 * recorded in `frames` and handed to `onFrame`. It never gives a window back: a test that wants
 * the bytes to flow opens the windows wide once (`settings(MAX_WINDOW)` and `windowUpdate`).
 */
export class FrameReader {
  readonly frames: Frame[] = [];
  private pending: Buffer = Buffer.alloc(0);

  constructor(
    private readonly socket: Socket,
    private readonly onFrame: (f: Frame, payload: Buffer) => void = () => undefined,
  ) {}

  push(chunk: Buffer): void {
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    while (this.pending.length >= 9) {
      const length = this.pending.readUIntBE(0, 3);
      if (this.pending.length < 9 + length) return;
      const payload = this.pending.subarray(9, 9 + length);
      const f: Frame = {
        type: this.pending.readUInt8(3),
        flags: this.pending.readUInt8(4),
        stream: this.pending.readUInt32BE(5) & 0x7fffffff,
        length,
      };
      if (f.type === FRAME.RST_STREAM) f.code = payload.readUInt32BE(0);
      if (f.type === FRAME.GOAWAY) f.code = payload.readUInt32BE(4);
      this.pending = this.pending.subarray(9 + length);
      this.frames.push(f);
      this.answer(f, payload);
      this.onFrame(f, payload);
    }
  }

  private answer(f: Frame, payload: Buffer): void {
    if (this.socket.destroyed) return;
    if (f.type === FRAME.SETTINGS && !(f.flags & FLAG.ACK))
      this.socket.write(frame(FRAME.SETTINGS, FLAG.ACK, 0));
    if (f.type === FRAME.PING && !(f.flags & FLAG.ACK))
      this.socket.write(frame(FRAME.PING, FLAG.ACK, 0, payload));
  }

  /** The frames received on one stream, in order. */
  on(stream: number): Frame[] {
    return this.frames.filter((f) => f.stream === stream);
  }
}

/** A frame as one short word for a failure message: `DATA(16384)`, `DATA+ES`, `RST_STREAM(0x8)`. */
export function describeFrame(f: Frame): string {
  const name = Object.entries(FRAME).find(([, t]) => t === f.type)?.[0] ?? `type${f.type}`;
  const endStream = (f.type === FRAME.DATA || f.type === FRAME.HEADERS) && f.flags & FLAG.END_STREAM;
  const detail =
    f.code !== undefined ? `(0x${f.code.toString(16)})` : f.type === FRAME.DATA ? `(${f.length})` : '';
  return `${name}${detail}${endStream ? '+END_STREAM' : ''}`;
}

/**
 * What is wrong with one stream's frames for an abort: it must end with RST_STREAM `code` and
 * carry no END_STREAM (on DATA or HEADERS) before it. `undefined` when they are right.
 */
export function abortProblem(frames: Frame[], code: number): string | undefined {
  const rst = frames.findIndex((f) => f.type === FRAME.RST_STREAM);
  if (rst < 0) return 'no RST_STREAM';
  const early = frames
    .slice(0, rst)
    .find((f) => (f.type === FRAME.DATA || f.type === FRAME.HEADERS) && f.flags & FLAG.END_STREAM);
  if (early) return `END_STREAM before the RST_STREAM (${describeFrame(early)})`;
  if (frames[rst]?.code !== code)
    return `RST_STREAM code 0x${(frames[rst]?.code ?? 0).toString(16)}, not 0x${code.toString(16)}`;
  return undefined;
}
