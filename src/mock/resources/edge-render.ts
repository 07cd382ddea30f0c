import type { HTTPSEdge } from '../../api/schemas/edge.js';
import type {
  EdgeModuleOutput,
  RouteModuleName,
  RouteModuleOutput,
} from '../../api/schemas/modules/index.js';
import type { HTTPSEdgeRoute } from '../../api/schemas/route.js';
import type {
  EdgeRecord,
  RouteModules,
  RouteRecord,
  StoredMutualTls,
  StoredRouteModules,
} from './edge-records.js';

/**
 * Certificate authorities and backends are not resources of this mock: their Refs point where the
 * real service keeps them, and any well-formed id is accepted.
 */
export const refUri = {
  certificateAuthority: (base: string, id: string) => `${base}/certificate_authorities/${id}`,
  backend: (base: string, id: string) => `${base}/backends/${id}`,
  ipPolicy: (base: string, id: string) => `${base}/ip_policies/${id}`,
};

export function edgeUri(base: string, edgeId: string): string {
  return `${base}/edges/https/${edgeId}`;
}

export function routeUri(base: string, edgeId: string, routeId: string): string {
  return `${edgeUri(base, edgeId)}/routes/${routeId}`;
}

export function renderMutualTls(m: StoredMutualTls, base: string): EdgeModuleOutput<'mutual_tls'> {
  return {
    enabled: m.enabled,
    certificate_authorities: m.certificate_authority_ids.map((id) => ({
      id,
      uri: refUri.certificateAuthority(base, id),
    })),
  };
}

/** A stored module in its response form: ids become Refs, everything else is shown as stored. */
export function renderRouteModule<N extends RouteModuleName>(
  name: N,
  stored: StoredRouteModules[N],
  base: string,
): RouteModuleOutput<N> {
  if (name === 'backend') {
    const b = stored as StoredRouteModules['backend'];
    const out: RouteModuleOutput<'backend'> = {
      enabled: b.enabled,
      backend: { id: b.backend_id, uri: refUri.backend(base, b.backend_id) },
    };
    return out as RouteModuleOutput<N>;
  }
  if (name === 'ip_restriction') {
    const r = stored as StoredRouteModules['ip_restriction'];
    // A deleted policy stays listed: the route then acts as if it had no rules.
    const out: RouteModuleOutput<'ip_restriction'> = {
      enabled: r.enabled,
      ip_policies: r.ip_policy_ids.map((id) => ({ id, uri: refUri.ipPolicy(base, id) })),
    };
    return out as RouteModuleOutput<N>;
  }
  return stored as RouteModuleOutput<N>;
}

function renderModules(
  modules: RouteModules,
  base: string,
): { [N in RouteModuleName]: RouteModuleOutput<N> | null } {
  const out = {} as Record<RouteModuleName, unknown>;
  for (const name of Object.keys(modules) as RouteModuleName[]) {
    const m = modules[name];
    out[name] = m === null ? null : renderRouteModule(name, m, base);
  }
  return out as { [N in RouteModuleName]: RouteModuleOutput<N> | null };
}

export function renderRoute(edgeId: string, r: RouteRecord, base: string): HTTPSEdgeRoute {
  return {
    edge_id: edgeId,
    id: r.id,
    uri: routeUri(base, edgeId, r.id),
    created_at: r.created_at,
    match_type: r.match_type,
    match: r.match,
    description: r.description,
    ...(r.metadata !== undefined ? { metadata: r.metadata } : {}),
    ...renderModules(r.modules, base),
  };
}

export function renderEdge(e: EdgeRecord, base: string): HTTPSEdge {
  return {
    id: e.id,
    uri: edgeUri(base, e.id),
    created_at: e.created_at,
    description: e.description,
    ...(e.metadata !== undefined ? { metadata: e.metadata } : {}),
    hostports: e.hostports,
    mutual_tls: e.mutual_tls ? renderMutualTls(e.mutual_tls, base) : null,
    tls_termination: e.tls_termination,
    routes: e.routes.map((r) => renderRoute(e.id, r, base)),
  };
}
