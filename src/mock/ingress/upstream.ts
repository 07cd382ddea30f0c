/** Choosing the endpoint for a URL (pooling) and dialing its upstream. */
import { connect, type Socket } from 'node:net';
import type { IngressErrorCode } from '../../api/error-codes/ingress.js';
import { parseUpstreamUrl } from '../../binding/endpoint-url.js';
import type { EndpointRecord } from '../resources/endpoints.js';

/**
 * Round-robin over pooled endpoints, one counter per account and canonical URL. When every
 * endpoint of a URL has pooling enabled, connections take turns; otherwise the oldest endpoint
 * owns the URL (the API should not allow that mix, but the ingress stays deterministic).
 */
export class PoolSelector {
  private readonly next = new Map<string, number>();

  select(accountId: string, url: string, endpoints: readonly EndpointRecord[]): EndpointRecord | undefined {
    if (endpoints.length <= 1 || !endpoints.every((e) => e.pooling_enabled)) return endpoints[0];
    const key = `${accountId}\u0000${url}`;
    const n = this.next.get(key) ?? 0;
    this.next.set(key, (n + 1) % endpoints.length);
    return endpoints[n % endpoints.length];
  }
}

export interface UpstreamTarget {
  host: string;
  port: number;
}

/** host and port of an `http://` or `tcp://` upstream URL (http defaults to 80); undefined otherwise. */
export function upstreamTarget(upstreamUrl: string): UpstreamTarget | undefined {
  const r = parseUpstreamUrl(upstreamUrl);
  return r.ok ? { host: r.value.host, port: r.value.port } : undefined;
}

export type DialResult = { ok: true; socket: Socket } | { ok: false; code: IngressErrorCode; msg: string };

/** Opens a half-open-capable TCP connection to the upstream; ERR_730 refused, ERR_731 anything else. */
export function dialUpstream(target: UpstreamTarget, timeoutMs: number): Promise<DialResult> {
  return new Promise((resolve) => {
    const where = `${target.host.includes(':') ? `[${target.host}]` : target.host}:${target.port}`;
    const socket = connect({ host: target.host, port: target.port, allowHalfOpen: true });
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ ok: false, code: 'ERR_731', msg: `upstream ${where} did not accept within ${timeoutMs} ms` });
    }, timeoutMs);
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.off('error', onError);
      socket.setNoDelay(true);
      resolve({ ok: true, socket });
    });
    const onError = (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      socket.destroy();
      if (err.code === 'ECONNREFUSED') {
        resolve({ ok: false, code: 'ERR_730', msg: `upstream ${where} refused the connection` });
      } else {
        resolve({
          ok: false,
          code: 'ERR_731',
          msg: `upstream ${where} is unreachable (${err.code ?? err.message})`,
        });
      }
    };
    socket.once('error', onError);
  });
}
