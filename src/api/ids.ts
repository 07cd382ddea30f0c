import { z } from 'zod';

/** Id prefixes of every resource in the management API. */
export const ID_PREFIX = {
  ipPolicy: 'ipp_',
  httpsEdge: 'edghts_',
  httpsEdgeRoute: 'edghtsrt_',
  tunnel: 'tn_',
  tunnelSession: 'ts_',
  endpoint: 'ep_',
  kubernetesOperator: 'k8sop_',
  operation: 'op_',
  /** Not resources of the mock: any well-formed id is accepted and rendered as a Ref. */
  certificateAuthority: 'ca_',
  backend: 'bkdbg_',
} as const;

export type IdPrefix = (typeof ID_PREFIX)[keyof typeof ID_PREFIX];

/**
 * The suffix grammar the client accepts: our mock mints 26 lower-case characters, real services
 * mint other lengths and mixed case, so the client only insists on the prefix and a plain token.
 */
const SUFFIX = /^[A-Za-z0-9]{1,64}$/;

export function hasIdPrefix(value: string, prefix: IdPrefix): boolean {
  return value.startsWith(prefix) && SUFFIX.test(value.slice(prefix.length));
}

/** A zod schema for an id of one resource kind. */
export function idSchema(prefix: IdPrefix) {
  return z.string().refine((v) => hasIdPrefix(v, prefix), {
    message: `must be an id starting with "${prefix}"`,
    params: { code: 'ERR_140' },
  });
}
