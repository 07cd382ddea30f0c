import { ID_PREFIX } from '../../api/ids.js';
import { ROUTE_MODULE_NAMES } from '../../api/schemas/modules/index.js';
import { HTTPSEdgeRouteCreate, HTTPSEdgeRouteUpdate } from '../../api/schemas/route.js';
import type { RequestContext } from '../http/context.js';
import { parseOrThrow } from '../http/errors.js';
import type { Reply, RouteSpec } from '../http/router.js';
import { validateMatch } from '../validation/edges/route-match.js';
import { validateRouteModules, type RouteModuleInputs } from '../validation/edges/route-modules.js';
import { rejectSamlGeneratedFields } from '../validation/edges/saml.js';
import { checkMatchUnique, checkRouteModulesState } from './edge-checks.js';
import {
  emptyRouteModules,
  findEdge,
  findRoute,
  saveEdge,
  withRoute,
  type EdgeRecord,
  type RouteRecord,
} from './edge-records.js';
import { renderRoute } from './edge-render.js';
import { buildRouteModules } from './route-module-store.js';
import { requireNonEmptyUpdate } from './shared.js';

function modulesOf(input: RouteModuleInputs): RouteModuleInputs {
  const out: Record<string, unknown> = {};
  for (const name of ROUTE_MODULE_NAMES) if (input[name] !== undefined) out[name] = input[name];
  return out;
}

/** Parses a route write's body with `schema` and runs the stateless rules. */
function parseRouteBody<T extends HTTPSEdgeRouteUpdate>(ctx: RequestContext, parse: (body: unknown) => T) {
  const raw = ctx.body as Record<string, unknown> | undefined;
  rejectSamlGeneratedFields(raw?.['saml'], 'body.saml');
  const input = parse(ctx.body);
  if (input.match !== undefined) validateMatch(input.match, 'body.match');
  const modules = modulesOf(input);
  validateRouteModules(modules, 'body');
  return { input, modules };
}

async function create(ctx: RequestContext): Promise<Reply> {
  const edgeId = ctx.params['edge_id']!;
  findEdge(ctx, edgeId);
  const { input, modules } = parseRouteBody(ctx, (b) => parseOrThrow(HTTPSEdgeRouteCreate, b));
  const check = (edge: EdgeRecord) => {
    checkMatchUnique(edge, input.match_type, input.match, undefined, 'body.match');
    checkRouteModulesState(ctx, edge, modules, (name) => `body.${name}`);
  };
  check(findEdge(ctx, edgeId));
  const id = ctx.services.ids.mint(ID_PREFIX.httpsEdgeRoute);
  const built = await buildRouteModules(modules, {
    edge: findEdge(ctx, edgeId),
    routeId: id,
    now: ctx.services.now(),
  });
  const edge = findEdge(ctx, edgeId); // state may have moved while the SAML certificate was generated
  check(edge);
  const route: RouteRecord = {
    id,
    created_at: ctx.services.timestamp(),
    match_type: input.match_type,
    match: input.match,
    description: input.description ?? '',
    ...(input.metadata !== undefined ? { metadata: input.metadata } : {}),
    modules: { ...emptyRouteModules(), ...built },
  };
  saveEdge(ctx, withRoute(edge, route));
  return { status: 201, body: renderRoute(edgeId, route, ctx.baseUrl) };
}

async function update(ctx: RequestContext): Promise<Reply> {
  const edgeId = ctx.params['edge_id']!;
  const routeId = ctx.params['id']!;
  findRoute(findEdge(ctx, edgeId), routeId);
  const { input, modules } = parseRouteBody(ctx, (b) => parseOrThrow(HTTPSEdgeRouteUpdate, b));
  requireNonEmptyUpdate(input);
  const check = (edge: EdgeRecord): RouteRecord => {
    const existing = findRoute(edge, routeId);
    if (input.match !== undefined || input.match_type !== undefined) {
      checkMatchUnique(
        edge,
        input.match_type ?? existing.match_type,
        input.match ?? existing.match,
        routeId,
        'body.match',
      );
    }
    checkRouteModulesState(ctx, edge, modules, (name) => `body.${name}`);
    return existing;
  };
  check(findEdge(ctx, edgeId));
  const built = await buildRouteModules(modules, {
    edge: findEdge(ctx, edgeId),
    routeId,
    now: ctx.services.now(),
  });
  const edge = findEdge(ctx, edgeId);
  const existing = check(edge);
  const route: RouteRecord = {
    ...existing,
    ...(input.match_type !== undefined ? { match_type: input.match_type } : {}),
    ...(input.match !== undefined ? { match: input.match } : {}),
    ...(input.description !== undefined ? { description: input.description } : {}),
    ...(input.metadata !== undefined ? { metadata: input.metadata } : {}),
    modules: { ...existing.modules, ...built },
  };
  saveEdge(ctx, withRoute(edge, route));
  return { status: 200, body: renderRoute(edgeId, route, ctx.baseUrl) };
}

/**
 * Routes live inside their edge: create, get, update, delete. There is no list operation (an
 * edge's `routes` array is the list), so GET on the collection answers 405 with `Allow: POST`.
 */
export function routeRoutes(): RouteSpec[] {
  const collection = { edge_id: ID_PREFIX.httpsEdge };
  const params = { edge_id: ID_PREFIX.httpsEdge, id: ID_PREFIX.httpsEdgeRoute };
  const path = '/edges/https/:edge_id/routes/:id';
  return [
    { method: 'POST', path: '/edges/https/:edge_id/routes', params: collection, handler: create },
    {
      method: 'GET',
      path,
      params,
      handler(ctx) {
        const edge = findEdge(ctx, ctx.params['edge_id']!);
        return { status: 200, body: renderRoute(edge.id, findRoute(edge, ctx.params['id']!), ctx.baseUrl) };
      },
    },
    { method: 'PATCH', path, params, handler: update },
    {
      method: 'DELETE',
      path,
      params,
      handler(ctx) {
        const edge = findEdge(ctx, ctx.params['edge_id']!);
        const route = findRoute(edge, ctx.params['id']!);
        saveEdge(ctx, { ...edge, routes: edge.routes.filter((r) => r.id !== route.id) });
        return { status: 204 };
      },
    },
  ];
}
