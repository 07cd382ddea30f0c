/**
 * The binding ingress wire protocol, shared by the ingress (mock) and the dialer (forwarder).
 *
 *   client → ingress  one preface line  {"v":1,"authtoken":"...","url":"http://name.namespace:80","source":{...}}\n
 *   ingress → client  one reply line    {"ok":true,"endpoint_id":"ep_..."}\n
 *                                    or {"ok":false,"code":"ERR_7xx","msg":"..."}\n (then the ingress closes)
 *
 * After `ok` the connection is a raw byte stream in both directions; half-close is respected.
 * Bytes that follow a newline in the same read belong to that stream, so the line reader hands
 * them back instead of dropping them.
 */
import { z } from 'zod';
import type { IngressErrorCode } from '../error-codes/ingress.js';

export const INGRESS_PROTOCOL_VERSION = 1;
/** Largest preface line the ingress accepts, in bytes, not counting the newline. */
export const MAX_PREFACE_BYTES = 4096;
/** Largest reply line the dialer accepts, in bytes, not counting the newline. */
export const MAX_REPLY_BYTES = 4096;

/** Who is connecting: the pod the forwarder accepted the connection from. Informational (logged). */
export const IngressSource = z.strictObject({
  pod: z.string().min(1).max(253).optional(),
  namespace: z.string().min(1).max(63).optional(),
  /** The source pod's IP address. */
  ip: z.string().min(1).max(45).optional(),
});
export type IngressSource = z.infer<typeof IngressSource>;

export const IngressPreface = z.strictObject({
  v: z.literal(INGRESS_PROTOCOL_VERSION),
  authtoken: z.string().min(1).max(512),
  url: z.string().min(1).max(2048),
  source: IngressSource.optional(),
});
export type IngressPreface = z.infer<typeof IngressPreface>;

const errorCode = z.string().regex(/^ERR_\d+$/);

/** Reply schemas are lenient about extra fields, so newer ingresses can add some. */
export const IngressReplyOk = z.object({ ok: z.literal(true), endpoint_id: z.string().optional() });
export const IngressReplyError = z.object({ ok: z.literal(false), code: errorCode, msg: z.string() });
export const IngressReply = z.discriminatedUnion('ok', [IngressReplyOk, IngressReplyError]);
export type IngressReply = z.infer<typeof IngressReply>;
export type IngressReplyError = z.infer<typeof IngressReplyError>;

/** Serialises one protocol line (JSON plus a single `\n`). */
export function encodeLine(value: IngressPreface | IngressReply): Buffer {
  return Buffer.from(`${JSON.stringify(value)}\n`, 'utf8');
}

export type LineResult =
  /** No newline yet; push more bytes. */
  | { kind: 'more' }
  /** A full line (without `\n` and without a trailing `\r`), and the bytes after it. */
  | { kind: 'line'; line: Buffer; rest: Buffer }
  /** More than `maxBytes` arrived without a newline. */
  | { kind: 'too_long' };

/**
 * Incremental reader of one line. Feed it chunks as they arrive; it splits correctly at any chunk
 * boundary, never scans a byte twice, and never buffers more than `maxBytes` (plus one chunk).
 * After it returns `line` or `too_long` it is finished; pushing again is a programming error.
 */
export class LineReader {
  private chunks: Buffer[] = [];
  private size = 0;
  private done = false;

  constructor(readonly maxBytes: number) {}

  push(chunk: Buffer): LineResult {
    if (this.done) throw new Error('LineReader: already returned its verdict');
    const nl = chunk.indexOf(0x0a);
    if (nl === -1) {
      this.size += chunk.length;
      if (this.size > this.maxBytes) return this.finish({ kind: 'too_long' });
      this.chunks.push(chunk);
      return { kind: 'more' };
    }
    if (this.size + nl > this.maxBytes) return this.finish({ kind: 'too_long' });
    this.chunks.push(chunk.subarray(0, nl));
    let line = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks);
    if (line.length > 0 && line[line.length - 1] === 0x0d) line = line.subarray(0, line.length - 1);
    return this.finish({ kind: 'line', line, rest: chunk.subarray(nl + 1) });
  }

  private finish(r: LineResult): LineResult {
    this.done = true;
    this.chunks = [];
    this.size = 0;
    return r;
  }
}

export type ParseResult<T> = { ok: true; value: T } | { ok: false; code: IngressErrorCode; msg: string };

const utf8 = new TextDecoder('utf-8', { fatal: true });

function parseJsonObject(line: Buffer): Record<string, unknown> | undefined {
  let value: unknown;
  try {
    value = JSON.parse(utf8.decode(line));
  } catch {
    return undefined;
  }
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

function describeIssues(err: z.ZodError): string {
  return err.issues
    .map((i) => {
      const path = i.path.join('.');
      if (i.code === 'unrecognized_keys') return `unknown field(s) ${i.keys.map((k) => `"${k}"`).join(', ')}`;
      return path ? `${path}: ${i.message}` : i.message;
    })
    .join('; ');
}

/** Validates a preface line: ERR_700 not a JSON object, ERR_702 wrong version, ERR_703 schema. */
export function parsePreface(line: Buffer): ParseResult<IngressPreface> {
  const obj = parseJsonObject(line);
  if (!obj) return { ok: false, code: 'ERR_700', msg: 'the preface must be one JSON object on one line' };
  if (obj['v'] !== INGRESS_PROTOCOL_VERSION) {
    return {
      ok: false,
      code: 'ERR_702',
      msg: `unsupported protocol version ${JSON.stringify(obj['v'] ?? null)}; this ingress speaks v=${INGRESS_PROTOCOL_VERSION}`,
    };
  }
  const r = IngressPreface.safeParse(obj);
  if (!r.success) return { ok: false, code: 'ERR_703', msg: `invalid preface: ${describeIssues(r.error)}` };
  return { ok: true, value: r.data };
}

/** Validates a reply line (dialer side): ERR_792 when it is not a valid reply. */
export function parseReply(line: Buffer): ParseResult<IngressReply> {
  const obj = parseJsonObject(line);
  const r = obj ? IngressReply.safeParse(obj) : undefined;
  if (!r?.success) {
    const shown = line.subarray(0, 200).toString('utf8');
    return { ok: false, code: 'ERR_792', msg: `malformed ingress reply: ${JSON.stringify(shown)}` };
  }
  return { ok: true, value: r.data };
}
