import { ID_PREFIX } from '../../api/ids.js';
import { EndpointMutualTLSMutate, EndpointTLSTerminationAtEdge } from '../../api/schemas/modules/edge-tls.js';
import type { EdgeModuleName } from '../../api/schemas/modules/index.js';
import type { RequestContext } from '../http/context.js';
import { MockError, parseOrThrow } from '../http/errors.js';
import type { Reply, RouteSpec } from '../http/router.js';
import { normalizeTlsTermination } from '../validation/edges/tls.js';
import { checkCertificateAuthoritiesExist, checkPassthrough } from './edge-checks.js';
import { findEdge, saveEdge, type EdgeRecord } from './edge-records.js';
import { renderMutualTls } from './edge-render.js';
import { passthroughView, storedMutualTls } from './edge-tls-state.js';

function render(edge: EdgeRecord, name: EdgeModuleName, base: string): unknown {
  if (name === 'mutual_tls') return edge.mutual_tls ? renderMutualTls(edge.mutual_tls, base) : null;
  return edge.tls_termination;
}

/** Applies a PUT body (the bare module object) to an edge; nothing is stored when a rule fails. */
function replace(ctx: RequestContext, edge: EdgeRecord, name: EdgeModuleName): EdgeRecord {
  if (name === 'mutual_tls') {
    const input = parseOrThrow(EndpointMutualTLSMutate, ctx.body);
    const updated = { ...edge, mutual_tls: storedMutualTls(input, 'body') };
    checkPassthrough(passthroughView(updated), 'body');
    checkCertificateAuthoritiesExist(
      ctx,
      updated.mutual_tls.certificate_authority_ids,
      'body.certificate_authority_ids',
    );
    return updated;
  }
  const input = parseOrThrow(EndpointTLSTerminationAtEdge, ctx.body);
  const updated = { ...edge, tls_termination: normalizeTlsTermination(input, 'body') };
  checkPassthrough(passthroughView(updated), 'body.terminate_at');
  return updated;
}

/** PUT/GET/DELETE /edges/https/{id}/mutual_tls and /tls_termination. */
export function edgeModuleRoutes(): RouteSpec[] {
  const params = { id: ID_PREFIX.httpsEdge };
  return (['mutual_tls', 'tls_termination'] as const).flatMap((name): RouteSpec[] => {
    const path = `/edges/https/:id/${name}`;
    return [
      {
        method: 'PUT',
        path,
        params,
        handler(ctx): Reply {
          const updated = replace(ctx, findEdge(ctx, ctx.params['id']!), name);
          saveEdge(ctx, updated);
          return { status: 200, body: render(updated, name, ctx.baseUrl) };
        },
      },
      {
        method: 'GET',
        path,
        params,
        handler(ctx): Reply {
          const edge = findEdge(ctx, ctx.params['id']!);
          const body = render(edge, name, ctx.baseUrl);
          if (body === null) {
            throw new MockError('ERR_350', `module ${name} is not configured on HTTPS edge ${edge.id}`, {
              module: name,
            });
          }
          return { status: 200, body };
        },
      },
      {
        method: 'DELETE',
        path,
        params,
        handler(ctx): Reply {
          const edge = findEdge(ctx, ctx.params['id']!);
          saveEdge(ctx, { ...edge, [name]: null });
          return { status: 204 };
        },
      },
    ];
  });
}
