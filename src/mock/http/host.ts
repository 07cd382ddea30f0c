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
