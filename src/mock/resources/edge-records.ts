import type {
  EndpointCircuitBreaker,
  EndpointCompression,
  EndpointHeaders,
  EndpointOAuth,
  EndpointOIDC,
  EndpointSAML,
  EndpointTLSTermination,
  EndpointTrafficPolicy,
  EndpointUserAgentFilter,
  EndpointWebhookValidation,
  EndpointWebsocketTCPConverter,
  RouteModuleName,
} from '../../api/schemas/modules/index.js';
import type { RequestContext } from '../http/context.js';
import { MockError } from '../http/errors.js';

/** How each route module is stored: the response form, except that references stay ids. */
export interface StoredRouteModules {
  backend: { enabled: boolean; backend_id: string };
  ip_restriction: { enabled: boolean; ip_policy_ids: string[] };
  circuit_breaker: EndpointCircuitBreaker;
  compression: EndpointCompression;
  request_headers: EndpointHeaders;
  response_headers: EndpointHeaders;
  webhook_verification: EndpointWebhookValidation;
  oauth: EndpointOAuth;
  saml: EndpointSAML;
  oidc: EndpointOIDC;
  websocket_tcp_converter: EndpointWebsocketTCPConverter;
  user_agent_filter: EndpointUserAgentFilter;
  traffic_policy: EndpointTrafficPolicy;
}

export type RouteModules = { [N in RouteModuleName]: StoredRouteModules[N] | null };

export interface StoredMutualTls {
  enabled: boolean;
  certificate_authority_ids: string[];
}

export interface RouteRecord {
  id: string;
  created_at: string;
  match_type: string;
  match: string;
  description: string;
  metadata?: string;
  modules: RouteModules;
}

export interface EdgeRecord {
  id: string;
  created_at: string;
  description: string;
  /** Absent until set; once set (even to "") it is shown. */
  metadata?: string;
  /** Normalized `host:port` entries (host lower-cased). */
  hostports: string[];
  mutual_tls: StoredMutualTls | null;
  tls_termination: EndpointTLSTermination | null;
  /** Oldest first: the order the edge's `routes` array shows. */
  routes: RouteRecord[];
}

declare module '../store/account-state.js' {
  interface CollectionTypes {
    https_edges: EdgeRecord;
  }
}

export function emptyRouteModules(): RouteModules {
  return {
    backend: null,
    ip_restriction: null,
    circuit_breaker: null,
    compression: null,
    request_headers: null,
    response_headers: null,
    webhook_verification: null,
    oauth: null,
    saml: null,
    oidc: null,
    websocket_tcp_converter: null,
    user_agent_filter: null,
    traffic_policy: null,
  };
}

/** Finds an edge of the caller's account or answers 404. */
export function findEdge(ctx: RequestContext, id: string): EdgeRecord {
  const edge = ctx.account.collection('https_edges').get(id);
  if (!edge) throw new MockError('ERR_300', `HTTPS edge ${id} not found`, { resource: 'https_edge' });
  return edge;
}

/** Finds a route of an edge or answers 404 (an edge's routes are only reachable through it). */
export function findRoute(edge: EdgeRecord, id: string): RouteRecord {
  const route = edge.routes.find((r) => r.id === id);
  if (!route) {
    throw new MockError('ERR_330', `route ${id} not found on HTTPS edge ${edge.id}`, {
      resource: 'https_edge_route',
    });
  }
  return route;
}

/** Stores an edge with one route replaced (or appended when new). Records are never mutated in place. */
export function withRoute(edge: EdgeRecord, route: RouteRecord): EdgeRecord {
  const i = edge.routes.findIndex((r) => r.id === route.id);
  const routes = i < 0 ? [...edge.routes, route] : edge.routes.map((r, j) => (j === i ? route : r));
  return { ...edge, routes };
}

export function saveEdge(ctx: RequestContext, edge: EdgeRecord): EdgeRecord {
  return ctx.account.collection('https_edges').put(edge);
}
