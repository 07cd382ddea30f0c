/**
 * The client side of binding ingress protocol v2: a small pool of long-lived HTTP/2 sessions to
 * the ingress (TLS with ALPN `h2`, or `h2c` with prior knowledge on loopback), each forwarded
 * connection one CONNECT stream on them. A session that got GOAWAY or failed takes no new
 * streams; a stream refused for lack of concurrency (REFUSED_STREAM) is retried on another
 * session; the server's MAX_CONCURRENT_STREAMS is honoured when picking a session.
 */
import {
  connect as h2connect,
  constants,
  type ClientHttp2Session,
  type ClientHttp2Stream,
  type IncomingHttpHeaders,
} from 'node:http2';
import { connect as tcpConnect, isIP, type Socket } from 'node:net';
import { connect as tlsConnect, type ConnectionOptions, type TLSSocket } from 'node:tls';
import { parseHostPort } from '../../net/host-port.js';
import type { CancelSignal } from './cancel.js';
import { abortStream } from './reset.js';
import { IngressError, isCertificateError, isNotTlsError, type IngressTlsOptions } from './dialer.js';
import { parseReply, type IngressSource } from './protocol.js';
import {
  ALPN_H2,
  DEFAULT_SHARED_WINDOW,
  DEFAULT_STREAM_WINDOW,
  sessionMemoryMb,
  V2_HEADERS,
} from './v2-protocol.js';
import { nextSetting, sessionWindowFor, shareOf, type WindowShare } from './window-share.js';

export interface IngressV2Options {
  /** `host:port` of the ingress. */
  address: string;
  /** TLS (ALPN h2); without it h2c, for a loopback ingress only. */
  tls?: IngressTlsOptions;
  /** Sessions kept at most; default 2. */
  maxSessions?: number;
  /** Flow-control window per stream at least, bytes; default DEFAULT_STREAM_WINDOW. */
  windowBytes?: number;
  /** What a session's streams share above `windowBytes` (window-share.ts); default DEFAULT_SHARED_WINDOW. */
  sharedWindowBytes?: number;
}

export interface OpenStreamOptions {
  authtoken: string;
  url: string;
  source?: IngressSource;
  timeoutMs: number;
  signal?: CancelSignal;
}

/** A stream whose request is sent; `response` settles with the ingress's answer. */
export interface EarlyStream {
  stream: ClientHttp2Stream;
  response: Promise<void>;
}

/** Thrown when the ingress did not select h2 by ALPN: speak v1 to it. */
export const NO_H2 = 'ERR_797';

interface Pooled {
  session: ClientHttp2Session;
  active: number;
  usable: boolean;
  /** Streams it took when it last refused one; lifted when one of its streams closes. */
  limit?: number | undefined;
  /** How its streams' windows follow their count (window-share.ts). */
  share: WindowShare;
  /** The stream window (SETTINGS_INITIAL_WINDOW_SIZE) last sent. */
  window: number;
}

/** Endpoint URLs whose CONNECT authority is kept (authorityFor). */
const AUTHORITIES_KEPT = 4096;

/**
 * A stream's errors are told through `response` and the upstream's watch; this keeps an unwatched
 * one from throwing. Module-level: a closure made in request() would keep its scope (the options,
 * the authtoken among them) alive for as long as the stream is open.
 */
const ignoreError = (): void => undefined;

/** How many times a stream refused for lack of concurrency is tried on another session. */
const REFUSED_RETRIES = 3;

export class IngressV2Pool {
  private readonly sessions: Pooled[] = [];
  private readonly connecting = new Set<Promise<Pooled>>();
  private readonly authorities = new Map<string, string>();
  private readonly target: { host: string; port: number };
  private closed = false;

  constructor(private readonly opts: IngressV2Options) {
    this.target = parseHostPort(opts.address);
  }

  /** Sessions open now, those draining after GOAWAY included (for tests and metrics). */
  get sessionCount(): number {
    return this.sessions.filter((p) => !p.session.destroyed).length;
  }

  /** Opens one CONNECT stream; resolves once the ingress answered 200 (the stream is then a byte stream). */
  async open(o: OpenStreamOptions): Promise<ClientHttp2Stream> {
    for (let attempt = 0; ; attempt++) {
      const early = await this.openEarly(o);
      try {
        await early.response;
        return early.stream;
      } catch (err) {
        if (isRefusedStream(err) && attempt < REFUSED_RETRIES) continue;
        throw err;
      }
    }
  }

  /**
   * Opens one CONNECT stream and hands it back as soon as its request is sent, before the ingress
   * answered: the caller may write its first bytes at once (they travel with the request, so the
   * first answer byte comes one round trip later, not two). `response` resolves on the 200 and
   * rejects with an IngressError on an error status or a reset; a stream refused for lack of
   * concurrency (REFUSED_STREAM) rejects with ERR_740 and lowers that session's capacity, so the
   * next open goes to another session. Nothing the caller wrote before a refusal reached the
   * upstream (the ingress answers 200 only once it reached it).
   */
  async openEarly(o: OpenStreamOptions): Promise<EarlyStream> {
    const pooled = await this.pick(o.timeoutMs);
    return this.request(pooled, o);
  }

  /** Closes every session (GOAWAY; open streams finish). */
  close(): void {
    this.closed = true;
    for (const p of this.sessions) p.session.close();
  }

  /** Destroys every session now (open streams are reset). */
  destroy(): void {
    this.closed = true;
    for (const p of this.sessions) p.session.destroy();
  }

  private async pick(timeoutMs: number): Promise<Pooled> {
    const max = this.opts.maxSessions ?? 2;
    for (;;) {
      // One pass, no arrays: this runs for every forwarded connection.
      let live = 0;
      let best: Pooled | undefined;
      for (const p of this.sessions) {
        if (!p.usable || p.session.closed || p.session.destroyed) continue;
        live++;
        if (p.active < this.capacity(p) && (!best || p.active < best.active)) best = p;
      }
      // Spread streams: an idle session with room, else a new session while the pool allows, else
      // the least busy one with room; sessions being opened count against the pool.
      if (best?.active === 0) return best;
      if (live + this.connecting.size < max) return this.track(this.connect(timeoutMs));
      if (best) return best;
      // Every session is full: wait for one being opened, or open one more beyond the pool
      // (tracked, so the callers that find every session full meanwhile wait for it too).
      const pending = [...this.connecting][0];
      if (!pending) return this.track(this.connect(timeoutMs));
      await pending.catch(() => undefined);
    }
  }

  private track(p: Promise<Pooled>): Promise<Pooled> {
    this.connecting.add(p);
    const forget = () => this.connecting.delete(p);
    p.then(forget, forget);
    return p;
  }

  /** Streams a session takes now: the server's MAX_CONCURRENT_STREAMS, lowered after a refusal. */
  private capacity(p: Pooled): number {
    return Math.min(
      p.session.remoteSettings.maxConcurrentStreams ?? Number.MAX_SAFE_INTEGER,
      p.limit ?? Infinity,
    );
  }
  private connect(timeoutMs: number): Promise<Pooled> {
    if (this.closed) return Promise.reject(new IngressError('ERR_794', 'the v2 pool is closed'));
    const { host, port } = this.target;
    const tls = this.opts.tls;
    const share: WindowShare = {
      floor: this.opts.windowBytes ?? DEFAULT_STREAM_WINDOW,
      shared: this.opts.sharedWindowBytes ?? DEFAULT_SHARED_WINDOW,
    };
    // A new session's first stream is alone on it.
    const window = shareOf(1, share);
    const sessionWindow = sessionWindowFor(share);
    return new Promise<Pooled>((resolve, reject) => {
      // The TLS socket: a session that failed before its 'connect' (a refused certificate) does
      // not own it yet, so destroying the session alone would leave it open.
      let socket: TLSSocket | undefined;
      let raw: Socket | undefined;
      const authority = `${tls ? 'https' : 'http'}://${host.includes(':') ? `[${host}]` : host}:${port}`;
      const servername = tls ? (tls.servername ?? (isIP(host) ? undefined : host)) : undefined;
      const session = h2connect(authority, {
        settings: { initialWindowSize: window },
        maxSessionMemory: sessionMemoryMb(sessionWindow),
        createConnection: () => {
          raw = tcpConnect({ host, port });
          // No Nagle: a stream's DATA right behind its HEADERS would otherwise wait for the ACK
          // of the HEADERS (delayed up to 40 ms by the peer), and the first byte with it.
          raw.setNoDelay(true);
          if (!tls) return raw;
          // TLS over a TCP socket of our own: a TLSSocket destroyed during the handshake (a
          // refused certificate) can leave the connection it opened itself up.
          raw.on('error', () => undefined);
          socket = tlsConnect(tlsOptions(raw, host, tls, servername));
          return socket;
        },
      });
      const pooled: Pooled = { session, active: 0, usable: true, share, window };
      // A raise waits for the last change's acknowledgement (nextSetting); look again then.
      session.on('localSettings', () => shareWindow(pooled, pooled.active));
      const timer = setTimeout(
        () =>
          fail(
            new IngressError(
              'ERR_791',
              `no HTTP/2 session with the ingress at ${this.opts.address} within ${timeoutMs} ms`,
            ),
          ),
        timeoutMs,
      );
      let settled = false;
      const fail = (e: IngressError) => {
        pooled.usable = false;
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        session.destroy();
        socket?.destroy();
        raw?.destroy();
        reject(e);
      };
      session.on('error', (err: NodeJS.ErrnoException) => fail(this.sessionError(err)));
      session.on('goaway', () => (pooled.usable = false));
      session.on('close', () => {
        pooled.usable = false;
        const i = this.sessions.indexOf(pooled);
        if (i >= 0) this.sessions.splice(i, 1);
        fail(
          tls
            ? new IngressError('ERR_790', `the ingress at ${this.opts.address} closed the HTTP/2 session`)
            : new IngressError(
                NO_H2,
                `the ingress at ${this.opts.address} closed the connection without answering HTTP/2 (h2c): speak v1, or it speaks TLS`,
              ),
        );
      });
      const ready = () => {
        if (settled) return;
        session.setLocalWindowSize(sessionWindow);
        settled = true;
        clearTimeout(timer);
        this.sessions.push(pooled);
        resolve(pooled);
      };
      // Ready once the server's SETTINGS arrived (its MAX_CONCURRENT_STREAMS is known, and for h2c
      // they prove the peer speaks HTTP/2) and, over TLS, it selected h2 by ALPN.
      let connected = !tls;
      let settings = false;
      session.once('connect', (_s, socket) => {
        if (!tls) return;
        if ((socket as { alpnProtocol?: string | false }).alpnProtocol !== ALPN_H2) {
          fail(
            new IngressError(NO_H2, `the ingress at ${this.opts.address} did not select h2 (ALPN): speak v1`),
          );
          return;
        }
        connected = true;
        if (settings) ready();
      });
      session.once('remoteSettings', () => {
        settings = true;
        if (connected) ready();
      });
    });
  }

  /** A session error as the dialer's codes: a refused certificate, TLS against plain TCP, or a transport failure. */
  private sessionError(err: NodeJS.ErrnoException): IngressError {
    const reason = err.code ?? err.message;
    const at = this.opts.address;
    if (isCertificateError(err.code))
      return new IngressError('ERR_795', `the ingress certificate at ${at} was refused: ${reason}`);
    if (this.opts.tls && isNotTlsError(err.code))
      return new IngressError(
        'ERR_796',
        `the ingress at ${at} does not speak TLS (${reason}); set ingress.tls to false for a plain loopback ingress, or point ingress.address at its TLS port`,
      );
    if (!this.opts.tls && /ERR_HTTP2_(ERROR|SESSION_ERROR|INVALID)/.test(reason))
      return new IngressError(
        NO_H2,
        `the ingress at ${at} does not answer HTTP/2 (h2c, ${reason}): speak v1`,
      );
    return new IngressError('ERR_793', `cannot open an HTTP/2 session with the ingress at ${at}: ${reason}`);
  }

  /**
   * The CONNECT authority of an endpoint URL, parsed once per URL: a forwarder opens every stream
   * of a port to the same URL, and the parse cost 10 µs per forwarded connection in a profile.
   */
  private authorityFor(url: string): string {
    let authority = this.authorities.get(url);
    if (authority === undefined) {
      // Port 0 is the authtoken check's URL (TOKEN_CHECK_URL), answered without an upstream.
      const { host, port } = parseHostPort(authorityOf(url), { allowZero: true });
      authority = `${host}:${port}`;
      // Bounded: endpoints come and go over a forwarder's life.
      if (this.authorities.size >= AUTHORITIES_KEPT) this.authorities.clear();
      this.authorities.set(url, authority);
    }
    return authority;
  }

  private request(pooled: Pooled, o: OpenStreamOptions): EarlyStream {
    const authority = this.authorityFor(o.url);
    let stream: ClientHttp2Stream;
    // Lowered before the stream opens: the SETTINGS go out ahead of its HEADERS, so the ingress
    // gives it (and every other stream) the smaller window from its first byte.
    shareWindow(pooled, pooled.active + 1);
    try {
      stream = pooled.session.request(
        {
          ':method': 'CONNECT',
          ':authority': authority,
          authorization: `Bearer ${o.authtoken}`,
          [V2_HEADERS.url]: o.url,
          ...(o.source?.ip ? { [V2_HEADERS.sourceIp]: o.source.ip } : {}),
        },
        { endStream: false },
      );
    } catch (err) {
      // The session went away between pick and request (closed, GOAWAY): a transient failure.
      pooled.usable = false;
      throw new IngressError('ERR_790', `the HTTP/2 session with the ingress is gone (${String(err)})`);
    }
    countActive(pooled, stream);
    stream.on('error', ignoreError);
    const response = new Promise<void>((resolve, reject) => {
      let settled = false;
      const done = (err?: Error) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        o.signal?.removeEventListener('abort', onAbort);
        // Nothing keeps this answer's state (the options, the timer) alive once it settled.
        stream.off('close', onCloseUnanswered);
        if (err) {
          // RST_STREAM alone: an END_STREAM before it would read as the client's clean end.
          if (!stream.closed) abortStream(stream);
          reject(err);
        } else resolve();
      };
      const onAbort = () => done(new IngressError('ERR_794', 'aborted by the caller'));
      const onCloseUnanswered = () => {
        if (stream.rstCode === constants.NGHTTP2_REFUSED_STREAM) {
          // The session is full for now (fewer streams than it announced): the next pick avoids it.
          pooled.limit = Math.max(0, pooled.active);
          done(new RefusedStream());
        } else
          done(
            new IngressError(
              'ERR_790',
              `the ingress reset the stream before answering (code ${stream.rstCode})`,
            ),
          );
      };
      const timer = setTimeout(
        () => done(new IngressError('ERR_791', `no response from the ingress within ${o.timeoutMs} ms`)),
        o.timeoutMs,
      );
      if (o.signal?.aborted) return onAbort();
      o.signal?.addEventListener('abort', onAbort, { once: true });
      stream.once('response', (headers: IncomingHttpHeaders) => {
        const status = Number(headers[':status']);
        if (status === 200) return done();
        readRefusal(stream, headers).then(done, done);
      });
      stream.on('close', onCloseUnanswered);
    });
    response.catch(() => undefined);
    return { stream, response };
  }
}

/**
 * Counts `stream` on its session until it closes. A function of its own so that the listener,
 * which lives as long as the stream (idle for hours), holds only these two and not the request's
 * options (the authtoken among them). `on`, not `once`: 'close' fires once, and `once` adds a
 * wrapper object and a bound function per listener.
 */
function countActive(pooled: Pooled, stream: ClientHttp2Stream): void {
  pooled.active++;
  stream.on('close', () => {
    pooled.active--;
    pooled.limit = undefined;
    shareWindow(pooled, pooled.active);
  });
}

/**
 * Sends the stream window the session's count of streams calls for (window-share.ts), if it
 * changed: a SETTINGS frame, which moves every open stream's window by the difference.
 */
function shareWindow(pooled: Pooled, streams: number): void {
  const { session } = pooled;
  if (session.closed || session.destroyed) return;
  const next = nextSetting(pooled.window, streams, pooled.share, session.pendingSettingsAck);
  if (next === undefined) return;
  try {
    session.settings({ initialWindowSize: next });
    pooled.window = next;
  } catch (err) {
    // Too many unacknowledged SETTINGS (node:http2 allows 10; lowering needs at most
    // log2(shared / floor) in a row, and a raise waits for the acknowledgement): keep the window.
    // Anything else is a bug, not a condition to hide.
    if ((err as NodeJS.ErrnoException).code !== 'ERR_HTTP2_MAX_PENDING_SETTINGS_ACK') throw err;
  }
}

function tlsOptions(
  raw: Socket,
  host: string,
  tls: IngressTlsOptions,
  servername: string | undefined,
): ConnectionOptions {
  return {
    socket: raw,
    host,
    ALPNProtocols: [ALPN_H2],
    ...(tls.secureContext ? { secureContext: tls.secureContext } : tls.ca ? { ca: tls.ca } : {}),
    ...(servername ? { servername } : {}),
    rejectUnauthorized: tls.rejectUnauthorized ?? true,
  };
}

/** REFUSED_STREAM: the ingress did not process the stream (RFC 9113 §8.7); safe to retry anywhere. */
class RefusedStream extends IngressError {
  constructor() {
    super('ERR_740', 'the ingress refused the stream for lack of concurrency (REFUSED_STREAM); retry');
  }
}

export function isRefusedStream(err: unknown): boolean {
  return err instanceof RefusedStream;
}

/** `name.namespace:port` of an endpoint URL (default ports by scheme). */
function authorityOf(url: string): string {
  const m = /^([a-z]+):\/\/([^/:]+)(?::(\d+))?/.exec(url);
  if (!m) return 'invalid:1';
  const port = m[3] ?? (m[1] === 'https' ? '443' : '80');
  return `${m[2]}:${port}`;
}

/** The error status's body: the v1 refusal JSON (parsed with zod), else the x-binding-error header. */
async function readRefusal(stream: ClientHttp2Stream, headers: IncomingHttpHeaders): Promise<IngressError> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of stream as AsyncIterable<Buffer>) {
    size += c.length;
    if (size > 4096) break;
    chunks.push(c);
  }
  const parsed = parseReply(Buffer.concat(chunks));
  if (parsed.ok && !parsed.value.ok) return new IngressError(parsed.value.code, parsed.value.msg);
  const code = String(headers[V2_HEADERS.error] ?? 'ERR_792');
  return new IngressError(
    /^ERR_\d+$/.test(code) ? code : 'ERR_792',
    `the ingress answered ${String(headers[':status'])}`,
  );
}
