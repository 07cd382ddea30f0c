/**
 * The ingress address handed to operators at registration (`binding.ingress_endpoint`). Inside a
 * cluster it differs from the listen address (a Service name instead of 0.0.0.0), so it is
 * configured on its own: `host:port`, or just `host` to keep the port the ingress listens on.
 */
import { isIP } from 'node:net';

export interface AdvertiseAddress {
  host: string;
  /** Absent: the ingress's listen port. */
  port?: number;
}

const DNS_NAME = /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i;

export const ADVERTISE_RULE =
  'must be host:port or host (a DNS name, an IPv4 address or a bracketed IPv6 address; port 1-65535)';

/** Parses `host[:port]` (`[v6][:port]`); undefined when it breaks ADVERTISE_RULE. */
export function parseAdvertise(input: string): AdvertiseAddress | undefined {
  const m = /^(?:\[([^\]]+)\]|([^:[\]]+))(?::(\d{1,5}))?$/.exec(input);
  if (!m) return undefined;
  const v6 = m[1];
  const host = v6 ?? m[2]!;
  if (v6 !== undefined ? isIP(v6) !== 6 : isIP(host) !== 4 && !DNS_NAME.test(host)) return undefined;
  if (m[3] === undefined) return { host: v6 !== undefined ? `[${v6}]` : host };
  const port = Number(m[3]);
  if (port < 1 || port > 65535) return undefined;
  return { host: v6 !== undefined ? `[${v6}]` : host, port };
}

/** The advertised `host:port`, completing a host-only setting with the listen port. */
export function advertisedAddress(
  advertise: string | undefined,
  listenAddress: string,
  listenPort: number,
): string {
  if (advertise === undefined) return listenAddress;
  const a = parseAdvertise(advertise);
  if (!a) throw new TypeError(`ingress.advertise ${ADVERTISE_RULE}, got "${advertise}"`);
  return `${a.host}:${a.port ?? listenPort}`;
}
