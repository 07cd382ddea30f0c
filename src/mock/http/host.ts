import type { IncomingMessage } from 'node:http';
import { MockError } from './errors.js';

/**
 * The Host header as `host[:port]` (RFC 9110 §7.2): a DNS-style name, an IPv4 address or a
 * bracketed IPv6 address, and an optional port from 1 to 65535. Anything else (a path, a query,
 * user information, spaces) would be copied into every `uri` and `next_page_uri` the mock builds,
 * which is how a client following `next_page_uri` could be sent elsewhere.
 */
const HOST = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9._-]{0,251}[A-Za-z0-9])?)(?::([0-9]{1,5}))?$/;

/** Undefined when `value` is a usable Host, else the rule it breaks. */
export function hostHeaderProblem(value: string): string | undefined {
  const m = HOST.exec(value);
  if (!m)
    return 'must have the form host[:port] (letters, digits, ".", "-", "_", or a bracketed IPv6 address)';
  const port = m[1];
  if (port !== undefined && (Number(port) < 1 || Number(port) > 65535)) {
    return 'must have the form host[:port] with a port from 1 to 65535';
  }
  return undefined;
}

/** One value per header, or a 400 naming it: Node keeps only the first of a repeated Host or Authorization. */
export function singleHeader(
  req: IncomingMessage,
  name: string,
  code: 'ERR_106' | 'ERR_107',
): string | undefined {
  const values = req.headersDistinct[name];
  if (values && values.length > 1) {
    throw new MockError(
      code,
      `the ${name === 'host' ? 'Host' : 'Authorization'} header was sent ${values.length} times; send it once`,
      {
        header: name,
      },
    );
  }
  return values?.[0];
}

/** A 400 (ERR_106) unless the request has at most one Host header, of the form host[:port]. */
export function checkHost(req: IncomingMessage): void {
  const host = singleHeader(req, 'host', 'ERR_106');
  if (host === undefined) return; // HTTP/1.0 without Host: the socket's own address is used
  const problem = hostHeaderProblem(host);
  if (problem) {
    throw new MockError('ERR_106', `the Host header ${problem}; got ${JSON.stringify(host.slice(0, 100))}`, {
      header: 'host',
    });
  }
}
