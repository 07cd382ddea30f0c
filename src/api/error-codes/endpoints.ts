import type { ErrorCatalogue } from './types.js';

/** ERR_5xx: cluster-bound endpoints (`/endpoints`). */
export const endpointCodes = {
  ERR_500: {
    status: 400,
    title:
      'URL rule 1: the URL must have the form [http|tcp]://<name>.<namespace>[:<port>] (no path, query or userinfo).',
  },
  ERR_501: { status: 400, title: 'URL rule 2: the URL scheme must be http or tcp.' },
  ERR_502: {
    status: 400,
    title:
      'URL rule 3: the hostname must be exactly two lower-case RFC 1123 labels (<name>.<namespace>), no wildcard.',
  },
  ERR_503: {
    status: 400,
    title: 'URL rule 4: the port must be a whole number from 1 to 65535; tcp URLs must give one.',
  },
  ERR_510: {
    status: 400,
    title:
      'bindings must hold exactly one value, "kubernetes": this API serves cluster-bound endpoints only.',
  },
  ERR_520: {
    status: 400,
    title:
      'Pooling conflict: another endpoint of the account has this URL, and this endpoint has pooling disabled.',
  },
  ERR_521: {
    status: 400,
    title:
      'Pooling conflict: another endpoint of the account has this URL with pooling disabled; enable pooling on it first.',
  },
  ERR_530: {
    status: 400,
    title:
      'upstream_url must be http://<host>[:<port>] or tcp://<host>:<port> with no path, query or userinfo.',
  },
  ERR_540: {
    status: 400,
    title: 'The list filter is not supported; the only filter accepted is "kubernetes" in obj.bindings.',
  },
} as const satisfies ErrorCatalogue;
