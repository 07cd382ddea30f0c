import type { EndpointMutualTLSMutate } from '../../api/schemas/modules/edge-tls.js';
import { validateMutualTls } from '../validation/edges/tls.js';
import type { PassthroughView } from '../validation/edges/tls.js';
import type { EdgeRecord, StoredMutualTls } from './edge-records.js';

/** A validated mutual_tls request as stored (`enabled` defaults to true). */
export function storedMutualTls(input: EndpointMutualTLSMutate, field: string): StoredMutualTls {
  validateMutualTls(input, field);
  return { enabled: input.enabled ?? true, certificate_authority_ids: input.certificate_authority_ids };
}

/** What the edge-wide TLS passthrough rule looks at. */
export function passthroughView(
  edge: Pick<EdgeRecord, 'tls_termination' | 'mutual_tls' | 'routes'>,
): PassthroughView {
  return {
    tls_termination: edge.tls_termination,
    hasMutualTls: edge.mutual_tls !== null,
    routes: edge.routes.map((r) => ({ id: r.id, modules: r.modules })),
  };
}
