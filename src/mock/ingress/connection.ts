/** One ingress connection from accept to close: preface, authentication, endpoint, upstream, piping. */
import type { Socket } from 'node:net';
import type { IngressErrorCode } from '../../api/error-codes/ingress.js';
import { encodeLine, type IngressSource } from '../../api/ingress/protocol.js';
import { parseEndpointUrl } from '../../binding/endpoint-url.js';
import type { Logger } from '../../log/logger.js';
import type { MockConfig } from '../config.js';
import { endpointsForUrl } from '../resources/endpoints.js';
import type { MockServices } from '../services.js';
import { EVICTED_MSG, readPreface, rejectConnection } from './handshake.js';
import type { PromoteResult } from './admission.js';
import { pipeBoth, type PipeOutcome, type Piping } from './pipe.js';
import { upstreamTarget, type DialResult, type PoolSelector, type UpstreamTarget } from './upstream.js';

export interface ConnectionContext {
  services: MockServices;
  config: MockConfig['ingress'];
  pool: PoolSelector;
  log: Logger;
  isShuttingDown(): boolean;
  /** Registers a running pipe so shutdown can tear it down; returns the unregister function. */
  trackPipe(p: Piping): () => void;
  /** Registers an upstream socket so shutdown can close it even before piping starts. */
  trackUpstream(s: Socket): void;
  /** Dials an upstream, refusing the server's own listeners. */
  dial(target: UpstreamTarget): Promise<DialResult>;
  /** Hands a connection that speaks HTTP/2 (v2) to the HTTP/2 server. */
  h2?: (socket: Socket) => void;
}

/** The connection's place in the ingress's admission (see admission.ts). */
export interface ConnectionSlot {
  /** Fires when the connection is evicted while it has not authenticated yet. */
  evicted: AbortSignal;
  /**
   * Leaves the handshake phase for one of the `max_connections` slots, once authenticated and its
   * endpoint known; `key` (account and URL) has its own share.
   */
  promote(key: string): PromoteResult;
  /** Leaves the handshake phase without a slot of its own: an HTTP/2 session, whose streams take slots. */
  settle(): void;
}

/** Everything the per-connection log line carries. Never the authtoken. */
interface ConnectionLog {
  conn: number;
  remote: string;
  account?: string;
  url?: string;
  endpoint_id?: string;
  source?: IngressSource;
  outcome: PipeOutcome | 'rejected' | 'client_closed';
  code?: IngressErrorCode;
  error?: string;
  bytes_in: number;
  bytes_out: number;
  duration_ms: number;
}

/** The one log message of the ingress: one line per connection, when it is over. */
export const CONNECTION_LOG_MSG = 'ingress connection';

let connectionCounter = 0;

function remoteOf(socket: Socket): string {
  const a = socket.remoteAddress ?? '?';
  return `${a.includes(':') ? `[${a}]` : a}:${socket.remotePort ?? 0}`;
}

export type FoundEndpoint =
  | { ok: true; url: string; endpointId: string; target: UpstreamTarget }
  | { ok: false; code: IngressErrorCode; msg: string; url?: string; endpointId?: string };

/**
 * The endpoint a stream of `accountId` for `rawUrl` goes to (identical URLs pooled) and the
 * upstream to dial: ERR_720 invalid URL, ERR_721 no such endpoint, ERR_722 no usable upstream.
 * Shared by v1 connections and v2 streams.
 */
export function findEndpoint(ctx: ConnectionContext, accountId: string, rawUrl: string): FoundEndpoint {
  const parsed = parseEndpointUrl(rawUrl);
  if (!parsed.ok) return { ok: false, code: 'ERR_720', msg: `invalid endpoint URL: ${parsed.message}` };
  const url = parsed.value.url;
  const endpoints = endpointsForUrl(ctx.services.state(accountId), url);
  if (endpoints.length === 0)
    return { ok: false, code: 'ERR_721', msg: `no endpoint with URL ${url} in this account`, url };
  const endpoint = ctx.pool.select(
    accountId,
    url,
    endpoints.filter((e) => e.upstream_url),
  );
  if (!endpoint?.upstream_url) {
    const endpointId = endpoints[0]!.id;
    return {
      ok: false,
      code: 'ERR_722',
      msg: `endpoint ${endpointId} (${url}) has no upstream_url`,
      url,
      endpointId,
    };
  }
  const target = upstreamTarget(endpoint.upstream_url);
  if (!target) {
    return {
      ok: false,
      code: 'ERR_722',
      msg: `endpoint ${endpoint.id} has an upstream_url the ingress cannot dial (only http:// and tcp:// with a host and port)`,
      url,
      endpointId: endpoint.id,
    };
  }
  return { ok: true, url, endpointId: endpoint.id, target };
}

export async function serveConnection(
  socket: Socket,
  ctx: ConnectionContext,
  slot: ConnectionSlot,
): Promise<void> {
  const started = performance.now();
  const entry: ConnectionLog = {
    conn: ++connectionCounter,
    remote: remoteOf(socket),
    outcome: 'closed',
    bytes_in: 0,
    bytes_out: 0,
    duration_ms: 0,
  };
  // Guard against unhandled 'error' events between the steps; the piping adds its own handling.
  socket.on('error', (err: NodeJS.ErrnoException) => (entry.error ??= err.code ?? err.message));
  socket.setNoDelay(true);

  const emit = () => {
    entry.duration_ms = Math.round(performance.now() - started);
    if (entry.outcome === 'rejected' && entry.code === 'ERR_750') ctx.log.error(entry, CONNECTION_LOG_MSG);
    else ctx.log.info(entry, CONNECTION_LOG_MSG);
  };
  const reject = (code: IngressErrorCode, msg: string) => {
    entry.outcome = 'rejected';
    entry.code = code;
    rejectConnection(socket, code, msg);
    emit();
  };

  try {
    const pre = await readPreface(socket, ctx.config.preface_timeout_ms, slot.evicted);
    if (pre.kind === 'closed') {
      entry.outcome = 'client_closed';
      socket.destroy();
      emit();
      return;
    }
    if (pre.kind === 'error') return reject(pre.code, pre.msg);
    if (pre.kind === 'h2c') {
      if (!ctx.h2) return reject('ERR_702', 'this ingress does not speak HTTP/2 (v2); use v1');
      // A session, not a stream: it leaves the handshake phase, and each stream takes a slot.
      slot.settle();
      socket.unshift(pre.head);
      ctx.h2(socket);
      return;
    }
    const { preface, rest } = pre;
    if (preface.source) entry.source = preface.source;
    if (ctx.isShuttingDown()) return reject('ERR_741', 'the ingress is shutting down');

    const accountId = ctx.services.directory.accountForAuthtoken(preface.authtoken);
    if (!accountId) return reject('ERR_710', 'the authtoken is not valid for any account');
    entry.account = accountId;

    const found = findEndpoint(ctx, accountId, preface.url);
    if (found.url) entry.url = found.url;
    if (found.endpointId) entry.endpoint_id = found.endpointId;
    if (!found.ok) return reject(found.code, found.msg);
    const { url, endpointId, target } = found;
    // Only now does the connection count against max_connections: sockets that never
    // authenticate cannot keep authenticated streams out, and each endpoint URL has its share.
    const promoted = slot.promote(`${accountId} ${url}`);
    if (promoted === 'gone') return reject('ERR_742', EVICTED_MSG);
    if (promoted === 'full') {
      return reject(
        'ERR_740',
        `the ingress is at its limit of ${ctx.config.max_connections} connections; retry later`,
      );
    }
    if (promoted === 'share') {
      return reject(
        'ERR_744',
        `${url} holds its share of the ingress (max_connections_per_url ${ctx.config.max_connections_per_url}); retry later`,
      );
    }
    const dialed = await ctx.dial(target);
    if (!dialed.ok) return reject(dialed.code, `endpoint ${endpointId}: ${dialed.msg}`);
    const upstream = dialed.socket;
    ctx.trackUpstream(upstream);
    if (socket.destroyed) {
      upstream.destroy();
      entry.outcome = 'client_closed';
      emit();
      return;
    }
    if (ctx.isShuttingDown()) {
      upstream.destroy();
      return reject('ERR_741', 'the ingress is shutting down');
    }

    socket.write(encodeLine({ ok: true, endpoint_id: endpointId }));
    const piping = pipeBoth(socket, upstream, ctx.config.idle_timeout_ms, rest);
    const untrack = ctx.trackPipe(piping);
    const result = await piping.done;
    untrack();
    entry.outcome = result.outcome;
    entry.bytes_in = result.bytesIn;
    entry.bytes_out = result.bytesOut;
    if (result.error) entry.error = result.error;
    else delete entry.error;
    emit();
  } catch (err) {
    entry.error = err instanceof Error ? err.message : String(err);
    reject('ERR_750', 'internal ingress error');
  }
}
