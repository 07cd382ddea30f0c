/**
 * Whether an upstream address is one of the mock's own listeners (public API, admin, ingress).
 * Pure: the caller resolves host names and lists the machine's addresses first.
 */
import { isIP } from 'node:net';

/** A listener of this process as configured or bound: `host` may be a name, an IP or a wildcard. */
export interface OwnListener {
  /** What it is, for the error message: "admin interface", "binding ingress", ... */
  label: string;
  host: string;
  port: number;
}

/** An own listener with its host resolved to one IP (a name resolving to several gives several). */
export interface ResolvedListener {
  label: string;
  ip: string;
  port: number;
}

/**
 * One spelling per address, so comparisons are plain string equality: no brackets, no zone id,
 * lower case, IPv6 compressed the WHATWG way, IPv4-mapped IPv6 (`::ffff:127.0.0.1`) as IPv4.
 * Names are returned lower-cased.
 */
export function normaliseIp(address: string): string {
  const a = address
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/%.*$/, '')
    .toLowerCase();
  if (isIP(a) !== 6) return a;
  const canonical = new URL(`http://[${a}]/`).hostname.slice(1, -1);
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(canonical);
  if (!mapped) return canonical;
  const hi = parseInt(mapped[1]!, 16);
  const lo = parseInt(mapped[2]!, 16);
  return [hi >> 8, hi & 255, lo >> 8, lo & 255].join('.');
}

/** `0.0.0.0` and `::`: as a listen address "every local address"; as a destination, this host. */
export function isWildcardIp(ip: string): boolean {
  return ip === '0.0.0.0' || ip === '::';
}

/** 127.0.0.0/8 and ::1 (normalised IPs). */
export function isLoopbackIp(ip: string): boolean {
  return ip === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(ip);
}

/** True when a connection to `ip` stays on this machine. `localIps` are the interfaces' addresses. */
export function isLocalIp(ip: string, localIps: ReadonlySet<string>): boolean {
  return isWildcardIp(ip) || isLoopbackIp(ip) || localIps.has(ip);
}

/**
 * The own listener a connection to `ip:port` would reach, if any. A listener bound to a wildcard
 * is reached through every local address; a destination that is itself a wildcard reaches every
 * listener on that port. All IPs must be normalised.
 */
export function findOwnListener(
  target: { ip: string; port: number },
  listeners: readonly ResolvedListener[],
  localIps: ReadonlySet<string>,
): ResolvedListener | undefined {
  return listeners.find((l) => {
    if (l.port !== target.port) return false;
    if (isWildcardIp(l.ip)) return isLocalIp(target.ip, localIps);
    return l.ip === target.ip || isWildcardIp(target.ip);
  });
}

/** `host:port` with IPv6 in brackets, for messages. */
export function formatHostPort(host: string, port: number): string {
  return `${host.includes(':') ? `[${host}]` : host}:${port}`;
}
