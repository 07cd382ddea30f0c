/** Choosing the endpoint for a URL (pooling) and dialing its upstream, never one of our own listeners. */
import type { LookupAddress } from 'node:dns';
import { connect, type LookupFunction, type Socket } from 'node:net';
import type { IngressErrorCode } from '../../api/error-codes/ingress.js';
import { parseUpstreamUrl } from '../../binding/endpoint-url.js';
import type { EndpointRecord } from '../resources/endpoints.js';
import type { OutboundSockets } from './loop-guard.js';
import { findOwnListener, formatHostPort, normaliseIp, type OwnListener } from './own-addresses.js';
import { localIps, resolveHost, resolveListeners } from './resolve.js';

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

/** What the ingress must never dial, and where it records what it does dial. */
export interface DialGuard {
  /** The mock's own listeners, including the ingress itself and its advertised address. */
  ownListeners: readonly OwnListener[];
  outbound: OutboundSockets;
}

/**
 * Resolves the upstream host, refuses it when any of its addresses is one of the mock's own
 * listeners (ERR_732), and opens a half-open-capable TCP connection to exactly the addresses it
 * checked, so a second DNS answer cannot slip another address in between check and connect.
 * ERR_730 refused, ERR_731 unresolvable, unreachable or not accepted within `timeoutMs` (which
 * bounds resolution and connect together).
 */
export async function dialUpstream(
  target: UpstreamTarget,
  timeoutMs: number,
  guard: DialGuard,
): Promise<DialResult> {
  const where = formatHostPort(target.host, target.port);
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), timeoutMs);
  const late: DialResult = {
    ok: false,
    code: 'ERR_731',
    msg: `upstream ${where} did not accept within ${timeoutMs} ms`,
  };
  try {
    const checked = await untilAborted(checkTarget(target, guard), deadline.signal);
    if (!checked) return late;
    if (!checked.ok) return checked;
    return await connectTo(target, checked.addresses, where, guard.outbound, deadline.signal, late);
  } finally {
    clearTimeout(timer);
  }
}

type Checked = { ok: true; addresses: LookupAddress[] } | { ok: false; code: IngressErrorCode; msg: string };

async function checkTarget(target: UpstreamTarget, guard: DialGuard): Promise<Checked> {
  const where = formatHostPort(target.host, target.port);
  let addresses: LookupAddress[];
  try {
    addresses = await resolveHost(target.host);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? String(err);
    return { ok: false, code: 'ERR_731', msg: `upstream ${where} is unreachable (cannot resolve: ${code})` };
  }
  const listeners = await resolveListeners(guard.ownListeners);
  const local = localIps();
  for (const a of addresses) {
    const own = findOwnListener({ ip: normaliseIp(a.address), port: target.port }, listeners, local);
    if (own) {
      const via = normaliseIp(a.address) === normaliseIp(target.host) ? '' : ` (resolves to ${a.address})`;
      return {
        ok: false,
        code: 'ERR_732',
        msg:
          `upstream ${where}${via} is this server's own ${own.label} ` +
          `(${formatHostPort(own.ip, own.port)}); the ingress does not dial its own listeners`,
      };
    }
  }
  return { ok: true, addresses };
}

function connectTo(
  target: UpstreamTarget,
  addresses: LookupAddress[],
  where: string,
  outbound: OutboundSockets,
  deadline: AbortSignal,
  late: DialResult,
): Promise<DialResult> {
  return new Promise((resolve) => {
    // Node asks `lookup` for the host's addresses (all of them when it races IPv4 and IPv6);
    // it gets the checked ones, never a fresh DNS answer.
    const lookup: LookupFunction = (_host, opts, cb) => {
      if (opts.all) cb(null, addresses);
      else cb(null, addresses[0]!.address, addresses[0]!.family);
    };
    const socket = connect({ host: target.host, port: target.port, allowHalfOpen: true, lookup });
    outbound.add(socket, { addresses: addresses.map((a) => a.address), port: target.port });
    const onDeadline = () => {
      socket.destroy();
      resolve(late);
    };
    deadline.addEventListener('abort', onDeadline, { once: true });
    socket.once('connect', () => {
      deadline.removeEventListener('abort', onDeadline);
      socket.off('error', onError);
      socket.setNoDelay(true);
      resolve({ ok: true, socket });
    });
    const onError = (err: NodeJS.ErrnoException) => {
      deadline.removeEventListener('abort', onDeadline);
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

/** Resolves with the promise's value, or undefined once `signal` aborts. */
function untilAborted<T>(p: Promise<T>, signal: AbortSignal): Promise<T | undefined> {
  if (signal.aborted) return Promise.resolve(undefined);
  return new Promise((resolve, reject) => {
    const onAbort = () => resolve(undefined);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err instanceof Error ? err : new Error(String(err)));
      },
    );
  });
}
