/**
 * The one parser of `host:port` addresses and the one loopback test in the repository. Every
 * listen address, ingress address and advertised address goes through here, so IPv6 brackets,
 * IPv4-mapped IPv6 and the case of `localhost` are decided in exactly one place.
 */
import { BlockList, isIP } from 'node:net';

export interface HostPort {
  /** Without brackets: `::1`, `127.0.0.1`, `api.example.test`. */
  host: string;
  port: number;
}

export interface ParseHostPortOptions {
  /** Accept port 0 ("let the OS choose"), for listen addresses. Default false. */
  allowZero?: boolean;
  /** Accept an empty host (`:8080`, meaning every interface). Default false. */
  allowEmptyHost?: boolean;
}

const HOST_PORT = /^(?:\[([^\]]*)\]|([^:[\]]*)):(\d{1,5})$/;

/** The reason `address` is not a `host:port`, or undefined when it is one. */
export function hostPortProblem(address: string, opts: ParseHostPortOptions = {}): string | undefined {
  const shape = 'must be host:port with IPv6 hosts in brackets ([::1]:8080)';
  const m = HOST_PORT.exec(address);
  if (!m) return `${shape}, got "${address}"`;
  const host = m[1] ?? m[2] ?? '';
  if (m[1] !== undefined && isIP(host) !== 6) return `${shape}: "[${host}]" is not an IPv6 address`;
  if (host === '' && !opts.allowEmptyHost) return `${shape}: the host is missing in "${address}"`;
  const port = Number(m[3]);
  const min = opts.allowZero ? 0 : 1;
  if (!(port >= min && port <= 65535)) return `${shape}: the port must be from ${min} to 65535, got ${m[3]}`;
  return undefined;
}

/** Splits `host:port` / `[v6]:port`; throws a TypeError naming the problem. */
export function parseHostPort(address: string, opts: ParseHostPortOptions = {}): HostPort {
  const problem = hostPortProblem(address, opts);
  if (problem !== undefined) throw new TypeError(problem);
  const m = HOST_PORT.exec(address)!;
  return { host: m[1] ?? m[2] ?? '', port: Number(m[3]) };
}

/** Like `parseHostPort`, but undefined instead of throwing. */
export function tryParseHostPort(address: string, opts: ParseHostPortOptions = {}): HostPort | undefined {
  return hostPortProblem(address, opts) === undefined ? parseHostPort(address, opts) : undefined;
}

/** `host:port`, with IPv6 hosts in brackets. */
export function formatHostPort(host: string, port: number): string {
  const h = unbracket(host);
  return isIP(h) === 6 ? `[${h}]:${port}` : `${h}:${port}`;
}

function unbracket(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

const loopback = new BlockList();
loopback.addSubnet('127.0.0.0', 8, 'ipv4');
loopback.addAddress('::1', 'ipv6');

/**
 * True for `localhost` (any case, with or without the root dot), 127.0.0.0/8, `::1` in any
 * spelling, and IPv4-mapped loopback (`::ffff:127.0.0.1`). Brackets are ignored.
 */
export function isLoopbackHost(host: string): boolean {
  const h = unbracket(host).toLowerCase();
  if (h === 'localhost' || h === 'localhost.') return true;
  const family = isIP(h);
  if (family === 4) return loopback.check(h, 'ipv4');
  if (family === 6) return loopback.check(h, 'ipv6');
  return false;
}

/** `0.0.0.0`, `::` (any spelling) and the empty host: as a listen address, "every interface". */
export function isWildcardHost(host: string): boolean {
  const h = unbracket(host);
  if (h === '' || h === '0.0.0.0') return true;
  return isIP(h) === 6 && /^[0:]+$/.test(h);
}
