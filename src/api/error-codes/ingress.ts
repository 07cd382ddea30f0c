import type { ErrorCatalogue } from './types.js';

/**
 * ERR_7xx: the binding ingress (data plane). These codes travel in the ingress reply line
 * `{"ok":false,"code":...,"msg":...}`, not in HTTP responses; `status` is the closest HTTP
 * equivalent, kept so the catalogue stays uniform and the docs can group codes by kind.
 *
 * ERR_700–ERR_709 preface, ERR_710–ERR_719 authentication, ERR_720–ERR_729 URL and endpoint,
 * ERR_730–ERR_739 upstream, ERR_740–ERR_749 ingress capacity, ERR_790–ERR_799 conditions the
 * dialer (client side) reports itself; the ingress never sends those.
 */
export const ingressCodes = {
  ERR_700: { status: 400, title: 'The ingress preface is not a JSON object on one line.' },
  ERR_701: {
    status: 413,
    title: 'The ingress preface line is longer than the ingress accepts (4096 bytes).',
  },
  ERR_702: { status: 400, title: 'The ingress preface names an unsupported protocol version (only 1).' },
  ERR_703: {
    status: 400,
    title: 'The ingress preface has an unknown field, a missing field or a field with a bad value.',
  },
  ERR_704: { status: 408, title: 'The ingress preface did not arrive in time.' },
  ERR_710: { status: 403, title: 'The authtoken is not valid for any account.' },
  ERR_720: { status: 400, title: 'The preface url is not a valid cluster-bound endpoint URL.' },
  ERR_721: { status: 404, title: "No endpoint with this URL exists in the authtoken's account." },
  ERR_722: { status: 503, title: 'The endpoint has no usable upstream_url.' },
  ERR_730: { status: 502, title: "The endpoint's upstream refused the connection." },
  ERR_731: { status: 504, title: "The endpoint's upstream is unreachable or did not answer in time." },
  ERR_732: {
    status: 403,
    title:
      "The endpoint's upstream is one of the server's own listeners (API, admin or ingress); it is never dialled.",
  },
  ERR_733: {
    status: 508,
    title: "Loop: the connection comes from one of the ingress's own upstream connections.",
  },
  ERR_740: { status: 503, title: 'The ingress is at its connection limit; retry later.' },
  ERR_741: { status: 503, title: 'The ingress is shutting down.' },
  ERR_742: {
    status: 503,
    title: 'Evicted before authenticating: too many connections were waiting for their handshake or preface.',
  },
  ERR_743: {
    status: 429,
    title: 'Too many connections from this source address are in their handshake or preface.',
  },
  ERR_744: {
    status: 503,
    title:
      "The endpoint URL holds its share of the ingress's connections (max_connections_per_url); retry later.",
  },
  ERR_750: { status: 500, title: 'Internal ingress error.' },
  ERR_790: { status: 502, title: 'Dialer: the ingress closed the connection before replying.' },
  ERR_791: { status: 504, title: 'Dialer: no ingress reply within the timeout.' },
  ERR_792: { status: 502, title: 'Dialer: the ingress reply line is malformed.' },
  ERR_793: { status: 502, title: 'Dialer: could not connect to the ingress (TCP or TLS failure).' },
  ERR_794: { status: 499, title: 'Dialer: the connection attempt was aborted by the caller.' },
  ERR_795: {
    status: 495,
    title: "Dialer: the ingress's TLS certificate was refused (untrusted, expired or another name).",
  },
  ERR_797: {
    status: 502,
    title: 'Dialer: the ingress did not select HTTP/2 (ALPN h2) for protocol v2; speak v1 to it.',
  },
  ERR_796: {
    status: 502,
    title: 'Dialer: TLS and plain TCP mismatch: the ingress does not speak what ingress.tls says.',
  },
} as const satisfies ErrorCatalogue;

export type IngressErrorCode = keyof typeof ingressCodes;
