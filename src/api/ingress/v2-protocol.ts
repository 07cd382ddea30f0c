/**
 * Binding ingress protocol v2 (docs/ingress.md "v2"): forwarded connections as HTTP/2 CONNECT
 * streams. The names both sides share.
 */
export const V2_HEADERS = {
  /** The full endpoint URL, e.g. `http://name.namespace:80`. */
  url: 'x-binding-url',
  /** On an error response: the ERR_7xx code (the body is the v1 refusal JSON). */
  error: 'x-binding-error',
  /** The source pod's IP address (informational). */
  sourceIp: 'x-binding-source-ip',
} as const;

/** ALPN: `h2` selects v2; a TLS session without it is spoken to in v1. */
export const ALPN_H2 = 'h2';

/** The first bytes of an HTTP/2 connection (RFC 9113 §3.4): how a plain ingress tells h2c from a v1 preface. */
export const H2_PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');
