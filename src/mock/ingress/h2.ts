/**
 * Binding ingress protocol v2: each forwarded connection is one HTTP/2 `CONNECT` stream (RFC 9113
 * §8.5) on a long-lived session (ALPN `h2` over TLS, `h2c` with prior knowledge on loopback).
 *
 *   request   :method CONNECT, :authority name.namespace:port, authorization: Bearer <authtoken>,
 *             x-binding-url: <endpoint URL>, optional x-binding-source-ip
 *   response  200 once the upstream is reached; else 403/404/429/502/503/504 with
 *             x-binding-error: ERR_7xx and the v1 refusal JSON as the body
 *   bytes     DATA frames; END_STREAM is a half-close; RST_STREAM is an abort, both ways
 *
 * The same budgets as v1 apply per stream (max_connections, max_connections_per_url).
 */
import {
  constants,
  createServer,
  type Http2Server,
  type Http2Session,
  type ServerHttp2Stream,
} from 'node:http2';
import type { Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { errorCatalogue } from '../../api/error-codes/index.js';
import type { IngressErrorCode } from '../../api/error-codes/ingress.js';
import { KeepReadingSocket, writeQueueCap } from './keep-reading-socket.js';
import { sessionMemoryMb, sessionWindow, V2_HEADERS } from '../../api/ingress/v2-protocol.js';
import { abortStream, onCleanEnd, resetSocket } from '../../api/ingress/reset.js';
import { CONNECTION_LOG_MSG, findEndpoint, type ConnectionContext } from './connection.js';
import type { Gate } from './gate.js';
import { normaliseIp } from './own-addresses.js';

export interface H2Ingress {
  server: Http2Server;
  /** Serves HTTP/2 on a connection (TLS with ALPN h2, or h2c after its preface). */
  accept(socket: Socket): void;
  /** Sends GOAWAY on every session: no new streams there, the open ones finish. */
  goaway(): void;
  /** Resets every stream and closes every session now. */
  destroy(): void;
}

export interface H2Options {
  maxConcurrentStreams: number;
  /** Streams served per session at once; beyond it REFUSED_STREAM (default: none). */
  sessionStreamBudget?: number;
  /** Per-stream flow-control window, bytes (the session's: sessionWindow). */
  windowBytes: number;
  /** Waited after the upstream is reached, before the 200 (test-only; default 0). */
  answerDelayMs?: number;
}

function statusOf(code: IngressErrorCode): number {
  const s = (errorCatalogue as Record<string, { status: number } | undefined>)[code]?.status ?? 502;
  return s >= 400 && s < 600 ? s : 502;
}

function refuse(stream: ServerHttp2Stream, code: IngressErrorCode, msg: string): void {
  if (stream.destroyed || stream.headersSent) return;
  stream.respond({
    ':status': statusOf(code),
    [V2_HEADERS.error]: code,
    'content-type': 'application/json',
  });
  stream.end(JSON.stringify({ ok: false, code, msg }));
}

export function createH2Ingress(ctx: ConnectionContext, gate: Gate, opts: H2Options): H2Ingress {
  const sessions = new Set<Http2Session>();
  const server = createServer({
    maxSessionMemory: sessionMemoryMb(sessionWindow(opts.windowBytes)),
    settings: { maxConcurrentStreams: opts.maxConcurrentStreams, initialWindowSize: opts.windowBytes },
  });
  const connections = acceptor(server, opts.windowBytes);
  server.on('session', (session: Http2Session) => {
    sessions.add(session);
    session.once('close', () => sessions.delete(session));
    session.on('error', () => undefined);
    // The connection window too, not only each stream's: one session carries many streams.
    session.once('connect', () => session.setLocalWindowSize(sessionWindow(opts.windowBytes)));
  });
  const served = new WeakMap<Http2Session, number>();
  server.on('stream', (stream: ServerHttp2Stream, headers) => {
    const session = stream.session;
    const n = session ? (served.get(session) ?? 0) : 0;
    if (session && opts.sessionStreamBudget !== undefined && n >= opts.sessionStreamBudget) {
      ctx.log.info({ v: 2, outcome: 'refused_stream', streams: n }, CONNECTION_LOG_MSG);
      stream.on('error', () => undefined);
      stream.close(constants.NGHTTP2_REFUSED_STREAM);
      return;
    }
    if (session) {
      served.set(session, n + 1);
      stream.once('close', () => served.set(session, (served.get(session) ?? 1) - 1));
    }
    void serveStream(stream, headers, connections.sourceOf(session));
  });

  async function serveStream(
    stream: ServerHttp2Stream,
    headers: Record<string, string | string[] | undefined>,
    source: string,
  ): Promise<void> {
    stream.on('error', () => undefined);
    const started = performance.now();
    const log = (fields: Record<string, unknown>) =>
      ctx.log.info(
        { v: 2, duration_ms: Math.round(performance.now() - started), ...fields },
        CONNECTION_LOG_MSG,
      );
    const fail = (code: IngressErrorCode, msg: string, extra: Record<string, unknown> = {}) => {
      refuse(stream, code, msg);
      log({ outcome: 'rejected', code, ...extra });
    };
    if (headers[':method'] !== 'CONNECT') return fail('ERR_703', 'v2 streams are CONNECT requests');
    if (ctx.isShuttingDown()) return fail('ERR_741', 'the ingress is shutting down');
    const auth = String(headers['authorization'] ?? '');
    const token = auth.startsWith('Bearer ') ? auth.slice(7) : '';
    const accountId = token ? ctx.services.directory.accountForAuthtoken(token) : undefined;
    if (!accountId) return fail('ERR_710', 'the authtoken is not valid for any account');
    const found = findEndpoint(ctx, accountId, String(headers[V2_HEADERS.url] ?? ''));
    if (!found.ok) return fail(found.code, found.msg, { account: accountId, url: found.url });
    const slot = gate.streamSlot(source, `${accountId} ${found.url}`);
    if (!slot.ok) {
      return fail(
        slot.code,
        slot.code === 'ERR_744'
          ? `${found.url} holds its share of the ingress (max_connections_per_url ${ctx.config.max_connections_per_url}); retry later`
          : `the ingress is at its limit of ${ctx.config.max_connections} connections; retry later`,
      );
    }
    stream.once('close', slot.release);
    const dialed = await ctx.dial(found.target);
    if (!dialed.ok) return fail(dialed.code, `endpoint ${found.endpointId}: ${dialed.msg}`);
    const upstream = dialed.socket;
    ctx.trackUpstream(upstream);
    if (opts.answerDelayMs) await sleep(opts.answerDelayMs);
    if (stream.destroyed || stream.closed) {
      resetSocket(upstream);
      return;
    }
    // Bytes the client sent with its request, before this answer (v2 lets it: docs/ingress.md).
    const early = stream.readableLength;
    stream.respond({ ':status': 200 });
    pipeStream(stream, upstream, () =>
      log({
        outcome: 'closed',
        account: accountId,
        url: found.url,
        endpoint_id: found.endpointId,
        early_bytes: early,
      }),
    );
  }

  return {
    server,
    accept: connections.accept,
    goaway() {
      for (const s of sessions) if (!s.closed) s.close();
    },
    destroy() {
      for (const s of sessions) s.destroy();
    },
  };
}

/**
 * Hands connections to the HTTP/2 server through a KeepReadingSocket (keep-reading-socket.ts: two Node
 * sessions that both stop reading while writing deadlock at large windows), and remembers each
 * session's client address (the session's own socket is then a JS stream without one).
 */
function acceptor(server: Http2Server, windowBytes: number) {
  const sources = new WeakMap<Http2Session, string>();
  // The connection being accepted: the server emits 'session' synchronously inside 'connection'.
  let accepting: Socket | undefined;
  server.on('session', (session: Http2Session) =>
    sources.set(session, normaliseIp(accepting?.remoteAddress ?? '?')),
  );
  return {
    accept: (socket: Socket): void => {
      // No Nagle: the 200's HEADERS and the first DATA behind it go out at once (as v1's sockets do).
      socket.setNoDelay(true);
      accepting = socket;
      try {
        server.emit('connection', new KeepReadingSocket(socket, writeQueueCap(sessionWindow(windowBytes))));
      } finally {
        accepting = undefined;
      }
    },
    sourceOf: (session: Http2Session | undefined): string => (session && sources.get(session)) ?? '?',
  };
}

/**
 * Stream ⇄ upstream socket. A clean end either way is passed on as one (END_STREAM ⇄ FIN, the
 * other direction keeps flowing); an abort either way is passed on as one (RST_STREAM ⇄ TCP
 * RST; ours goes out as CONNECT_ERROR with no END_STREAM before it, reset.ts abortStream), never as a
 * clean end.
 */
export function pipeStream(stream: ServerHttp2Stream, upstream: Socket, done: () => void): void {
  let aborted = false;
  let closed = 0;
  const onClosed = () => {
    if (++closed === 2) done();
  };
  const abort = (fromUpstream: boolean) => {
    if (aborted) return;
    aborted = true;
    if (fromUpstream) abortStream(stream);
    else resetSocket(upstream);
  };
  let upstreamEnded = false;
  upstream.on('error', () => abort(true));
  upstream.once('end', () => {
    upstreamEnded = true;
    onCleanEnd(upstream, () => stream.end());
  });
  upstream.once('close', () => {
    if (!upstreamEnded) abort(true);
    onClosed();
  });
  // END_STREAM and a reset both end the readable side; a reset is known by the time the
  // stream's close was processed, so decide one turn later.
  stream.once('end', () =>
    setImmediate(() => {
      if (stream.aborted || (stream.rstCode ?? 0) !== constants.NGHTTP2_NO_ERROR) abort(false);
      else upstream.end();
    }),
  );
  // A reset from the client (RST_STREAM) is an abort; so is a stream closed without its END_STREAM.
  stream.once('aborted', () => abort(false));
  stream.once('close', () => {
    if (stream.rstCode !== constants.NGHTTP2_NO_ERROR && !aborted) abort(false);
    onClosed();
  });
  upstream.pipe(stream, { end: false });
  stream.pipe(upstream, { end: false });
}
