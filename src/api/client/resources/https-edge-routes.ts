import {
  ROUTE_MODULES,
  type RouteModuleInput,
  type RouteModuleName,
  type RouteModuleOutput,
} from '../../schemas/modules/index.js';
import { HTTPSEdgeRoute, type HTTPSEdgeRouteCreate, type HTTPSEdgeRouteUpdate } from '../../schemas/route.js';
import type { CallOptions, Transport } from '../transport.js';

const routePath = (edgeId: string, id: string) =>
  `/edges/https/${encodeURIComponent(edgeId)}/routes/${encodeURIComponent(id)}`;

/** One route module: replace (PUT the bare module object), get, delete. */
export class RouteModuleApi<N extends RouteModuleName> {
  constructor(
    private readonly t: Transport,
    readonly name: N,
  ) {}

  replace(
    edgeId: string,
    routeId: string,
    body: RouteModuleInput<N>,
    o: CallOptions = {},
  ): Promise<RouteModuleOutput<N>> {
    return this.t.call({
      method: 'PUT',
      path: `${routePath(edgeId, routeId)}/${this.name}`,
      body,
      schema: ROUTE_MODULES[this.name].output,
      ...o,
    }) as Promise<RouteModuleOutput<N>>;
  }

  /** The module; a 404 ApiError when it is not configured on the route. */
  get(edgeId: string, routeId: string, o: CallOptions = {}): Promise<RouteModuleOutput<N>> {
    return this.t.call({
      method: 'GET',
      path: `${routePath(edgeId, routeId)}/${this.name}`,
      schema: ROUTE_MODULES[this.name].output,
      ...o,
    }) as Promise<RouteModuleOutput<N>>;
  }

  /** Removes the module; the route then shows it as null. */
  delete(edgeId: string, routeId: string, o: CallOptions = {}): Promise<undefined> {
    return this.t.call({
      method: 'DELETE',
      path: `${routePath(edgeId, routeId)}/${this.name}`,
      schema: undefined,
      ...o,
    });
  }
}

/** Client names (camelCase) of the route modules and their wire names. */
export const ROUTE_MODULE_CLIENT_NAMES = {
  backend: 'backend',
  ipRestriction: 'ip_restriction',
  circuitBreaker: 'circuit_breaker',
  compression: 'compression',
  requestHeaders: 'request_headers',
  responseHeaders: 'response_headers',
  webhookVerification: 'webhook_verification',
  oauth: 'oauth',
  saml: 'saml',
  oidc: 'oidc',
  websocketTcpConverter: 'websocket_tcp_converter',
  userAgentFilter: 'user_agent_filter',
  trafficPolicy: 'traffic_policy',
} as const satisfies Record<string, RouteModuleName>;

export type RouteModulesApi = {
  readonly [K in keyof typeof ROUTE_MODULE_CLIENT_NAMES]: RouteModuleApi<
    (typeof ROUTE_MODULE_CLIENT_NAMES)[K]
  >;
};

/**
 * Routes of an HTTPS edge. There is no list call: an edge's routes come in its `routes` array.
 * Modules: `routes.modules.circuitBreaker.replace(edgeId, routeId, body)` and so on.
 */
export class HttpsEdgeRoutesApi {
  readonly modules: RouteModulesApi;

  constructor(private readonly t: Transport) {
    this.modules = Object.fromEntries(
      Object.entries(ROUTE_MODULE_CLIENT_NAMES).map(([key, wire]) => [key, new RouteModuleApi(t, wire)]),
    ) as unknown as RouteModulesApi;
  }

  create(edgeId: string, input: HTTPSEdgeRouteCreate, o: CallOptions = {}): Promise<HTTPSEdgeRoute> {
    return this.t.call({
      method: 'POST',
      path: `/edges/https/${encodeURIComponent(edgeId)}/routes`,
      body: input,
      schema: HTTPSEdgeRoute,
      ...o,
    });
  }

  get(edgeId: string, id: string, o: CallOptions = {}): Promise<HTTPSEdgeRoute> {
    return this.t.call({ method: 'GET', path: routePath(edgeId, id), schema: HTTPSEdgeRoute, ...o });
  }

  /** Partial update: omitted fields and modules stay; a given module replaces the stored one. */
  update(
    edgeId: string,
    id: string,
    input: HTTPSEdgeRouteUpdate,
    o: CallOptions = {},
  ): Promise<HTTPSEdgeRoute> {
    return this.t.call({
      method: 'PATCH',
      path: routePath(edgeId, id),
      body: input,
      schema: HTTPSEdgeRoute,
      ...o,
    });
  }

  delete(edgeId: string, id: string, o: CallOptions = {}): Promise<undefined> {
    return this.t.call({ method: 'DELETE', path: routePath(edgeId, id), schema: undefined, ...o });
  }
}
