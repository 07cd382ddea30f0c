/**
 * Opens upstreams through the binding ingress in the protocol the config asks for
 * (`ingress.protocol`): `v2` one HTTP/2 stream per client on a few shared sessions, `v1` one
 * connection per client, `auto` v2 when the ingress offers it (ALPN `h2` over TLS, an HTTP/2
 * answer to the h2c preface on plain TCP) and v1 when it does not, asked again after
 * V1_RECHECK_MS. One pool of sessions per ingress address and TLS settings; a pool replaced (new
 * address, new CA) is closed with GOAWAY, so its live streams finish.
 */
import { connectThroughIngress, IngressError, type IngressTlsOptions } from '../api/ingress/dialer.js';
import { IngressV2Pool, NO_H2 } from '../api/ingress/v2-dialer.js';
import type { CancelSignal } from '../api/ingress/cancel.js';
import type { IngressSource } from '../api/ingress/protocol.js';
import type { IngressProtocolSetting } from './config.js';
import { socketUpstream, type IngressProtocol, type Upstream } from './upstream.js';
import { streamUpstream } from './upstream-v2.js';

/** How long `auto` keeps to v1 after the ingress did not offer v2. */
export const V1_RECHECK_MS = 30_000;

export interface OpenRequest {
  address: string;
  authtoken: string;
  url: string;
  source: IngressSource | undefined;
  timeoutMs: number;
  signal: CancelSignal;
  onTransportUp?: () => void;
}

export interface IngressOpenerOptions {
  protocol: IngressProtocolSetting;
  /** HTTP/2 sessions kept per ingress. */
  sessions: number;
  /** Per-stream flow-control window, bytes, at least. */
  windowBytes: number;
  /** What a session's streams share above windowBytes (window-share.ts). */
  sharedWindowBytes: number;
  /** Told when `auto` settles on a protocol for an address (logs). */
  onProtocol?: (address: string, protocol: IngressProtocol, why: string) => void;
  now?: () => number;
}

export class IngressOpener {
  private pool: { key: string; tls: IngressTlsOptions | undefined; pool: IngressV2Pool } | undefined;
  private v1Until = new Map<string, number>();
  private readonly now: () => number;

  constructor(private readonly opts: IngressOpenerOptions) {
    this.now = opts.now ?? Date.now;
  }

  /** HTTP/2 sessions open now. */
  get sessions(): number {
    return this.pool?.pool.sessionCount ?? 0;
  }

  /** The protocol the next open to `address` uses. */
  protocolFor(address: string): IngressProtocol {
    if (this.opts.protocol !== 'auto') return this.opts.protocol;
    return (this.v1Until.get(address) ?? 0) > this.now() ? 'v1' : 'v2';
  }

  async open(r: OpenRequest, tls: IngressTlsOptions | undefined): Promise<Upstream> {
    if (this.protocolFor(r.address) === 'v1') return socketUpstream(await connectThroughIngress(v1(r, tls)));
    try {
      const early = await this.poolFor(r.address, tls).openEarly({
        authtoken: r.authtoken,
        url: r.url,
        ...(r.source ? { source: r.source } : {}),
        timeoutMs: r.timeoutMs,
        signal: r.signal,
      });
      r.onTransportUp?.();
      return streamUpstream(early);
    } catch (err) {
      if (this.opts.protocol !== 'auto' || !(err instanceof IngressError) || err.code !== NO_H2) throw err;
      this.v1Until.set(r.address, this.now() + V1_RECHECK_MS);
      this.opts.onProtocol?.(r.address, 'v1', err.msg);
      return socketUpstream(await connectThroughIngress(v1(r, tls)));
    }
  }

  /** Closes the sessions with GOAWAY (open streams finish). */
  close(): void {
    this.pool?.pool.close();
    this.pool = undefined;
  }

  /** Resets every stream and closes every session now. */
  destroy(): void {
    this.pool?.pool.destroy();
    this.pool = undefined;
  }

  private poolFor(address: string, tls: IngressTlsOptions | undefined): IngressV2Pool {
    if (this.pool && this.pool.key === address && this.pool.tls === tls) return this.pool.pool;
    this.pool?.pool.close();
    const pool = new IngressV2Pool({
      address,
      ...(tls ? { tls } : {}),
      maxSessions: this.opts.sessions,
      windowBytes: this.opts.windowBytes,
      sharedWindowBytes: this.opts.sharedWindowBytes,
    });
    this.pool = { key: address, tls, pool };
    return pool;
  }
}

function v1(r: OpenRequest, tls: IngressTlsOptions | undefined) {
  return {
    address: r.address,
    authtoken: r.authtoken,
    url: r.url,
    ...(tls ? { tls } : {}),
    ...(r.source ? { source: r.source } : {}),
    timeoutMs: r.timeoutMs,
    signal: r.signal,
    ...(r.onTransportUp ? { onTransportUp: r.onTransportUp } : {}),
  };
}
