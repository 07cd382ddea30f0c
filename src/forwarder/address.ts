/** Small pure helpers about `host:port` addresses, shared by the config and the runtime checks. */
import { isIP } from 'node:net';
import { parseIngressAddress } from '../api/ingress/dialer.js';

/** True for 127.0.0.0/8, ::1 and `localhost`: the only hosts a plain-TCP ingress may have. */
export function isLoopbackHost(host: string): boolean {
  const h = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  if (h === 'localhost' || h === '::1') return true;
  return isIP(h) === 4 && h.startsWith('127.');
}

/** Parses `host:port` (IPv6 in brackets); undefined when it is not one. */
export function tryParseAddress(address: string): { host: string; port: number } | undefined {
  try {
    return parseIngressAddress(address);
  } catch {
    return undefined;
  }
}
