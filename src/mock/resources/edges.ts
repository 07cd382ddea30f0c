import { ID_PREFIX } from '../../api/ids.js';
import { HTTPSEdgeCreate, HTTPSEdgeUpdate } from '../../api/schemas/edge.js';
import type { RequestContext } from '../http/context.js';
import { parseOrThrow } from '../http/errors.js';
import type { RouteSpec } from '../http/router.js';
import { listReply } from '../paging.js';
import { validateHostports } from '../validation/edges/hostports.js';
import { normalizeTlsTermination } from '../validation/edges/tls.js';
import { checkCertificateAuthoritiesExist, checkHostportsFree, checkPassthrough } from './edge-checks.js';
import { findEdge, saveEdge, type EdgeRecord } from './edge-records.js';
import { edgeModuleRoutes } from './edge-modules.js';
import { passthroughView, storedMutualTls } from './edge-tls-state.js';
import { routeModuleRoutes } from './route-modules.js';
import { routeRoutes } from './routes.js';
import { renderEdge } from './edge-render.js';
import { requireNonEmptyUpdate } from './shared.js';

/** The field a TLS conflict is reported on: what the request changed. */
function tlsField(input: { tls_termination?: unknown }): string {
  return input.tls_termination !== undefined ? 'body.tls_termination.terminate_at' : 'body.mutual_tls';
}

function create(ctx: RequestContext) {
  const input = parseOrThrow(HTTPSEdgeCreate, ctx.body);
  const hostports = validateHostports(input.hostports ?? [], 'body.hostports');
  const record: EdgeRecord = {
    id: ctx.services.ids.mint(ID_PREFIX.httpsEdge),
    created_at: ctx.services.timestamp(),
    description: input.description ?? '',
    ...(input.metadata !== undefined ? { metadata: input.metadata } : {}),
    hostports,
    mutual_tls: input.mutual_tls ? storedMutualTls(input.mutual_tls, 'body.mutual_tls') : null,
    tls_termination: input.tls_termination
      ? normalizeTlsTermination(input.tls_termination, 'body.tls_termination')
      : null,
    routes: [],
  };
  checkPassthrough(passthroughView(record), tlsField(input));
  checkHostportsFree(ctx, hostports, undefined, 'body.hostports');
  if (record.mutual_tls) {
    checkCertificateAuthoritiesExist(
      ctx,
      record.mutual_tls.certificate_authority_ids,
      'body.mutual_tls.certificate_authority_ids',
    );
  }
  saveEdge(ctx, record);
  return { status: 201, body: renderEdge(record, ctx.baseUrl) };
}

function update(ctx: RequestContext) {
  const existing = findEdge(ctx, ctx.params['id']!);
  const input = requireNonEmptyUpdate(parseOrThrow(HTTPSEdgeUpdate, ctx.body));
  const hostports = input.hostports
    ? validateHostports(input.hostports, 'body.hostports')
    : existing.hostports;
  const updated: EdgeRecord = {
    ...existing,
    ...(input.description !== undefined ? { description: input.description } : {}),
    ...(input.metadata !== undefined ? { metadata: input.metadata } : {}),
    hostports,
    mutual_tls: input.mutual_tls ? storedMutualTls(input.mutual_tls, 'body.mutual_tls') : existing.mutual_tls,
    tls_termination: input.tls_termination
      ? normalizeTlsTermination(input.tls_termination, 'body.tls_termination')
      : existing.tls_termination,
  };
  checkPassthrough(passthroughView(updated), tlsField(input));
  if (input.hostports) checkHostportsFree(ctx, hostports, existing.id, 'body.hostports');
  if (input.mutual_tls && updated.mutual_tls) {
    checkCertificateAuthoritiesExist(
      ctx,
      updated.mutual_tls.certificate_authority_ids,
      'body.mutual_tls.certificate_authority_ids',
    );
  }
  saveEdge(ctx, updated);
  return { status: 200, body: renderEdge(updated, ctx.baseUrl) };
}

/** Every route of HTTPS edges: edges, edge modules, routes and route modules. */
export function httpsEdgeApiRoutes(): RouteSpec[] {
  return [...edgeRoutes(), ...edgeModuleRoutes(), ...routeRoutes(), ...routeModuleRoutes()];
}

function edgeRoutes(): RouteSpec[] {
  const params = { id: ID_PREFIX.httpsEdge };
  return [
    { method: 'POST', path: '/edges/https', handler: create },
    {
      method: 'GET',
      path: '/edges/https',
      paged: true,
      handler(ctx) {
        return listReply(ctx, {
          key: 'https_edges',
          path: '/edges/https',
          prefix: ID_PREFIX.httpsEdge,
          newestFirst: ctx.account.collection('https_edges').newestFirst(),
          render: (e) => renderEdge(e, ctx.baseUrl),
        });
      },
    },
    {
      method: 'GET',
      path: '/edges/https/:id',
      params,
      handler: (ctx) => ({ status: 200, body: renderEdge(findEdge(ctx, ctx.params['id']!), ctx.baseUrl) }),
    },
    { method: 'PATCH', path: '/edges/https/:id', params, handler: update },
    {
      method: 'DELETE',
      path: '/edges/https/:id',
      params,
      handler(ctx) {
        const edge = findEdge(ctx, ctx.params['id']!);
        ctx.account.collection('https_edges').delete(edge.id); // its routes go with it
        return { status: 204 };
      },
    },
  ];
}
