import { ID_PREFIX } from '../../api/ids.js';
import { ROUTE_MODULES, ROUTE_MODULE_NAMES, type RouteModuleName } from '../../api/schemas/modules/index.js';
import type { RequestContext } from '../http/context.js';
import { MockError, parseOrThrow } from '../http/errors.js';
import type { Reply, RouteSpec } from '../http/router.js';
import { validateRouteModule, type RouteModuleInputs } from '../validation/edges/route-modules.js';
import { rejectSamlGeneratedFields } from '../validation/edges/saml.js';
import { checkRouteModulesState } from './edge-checks.js';
import { findEdge, findRoute, saveEdge, withRoute } from './edge-records.js';
import { renderRouteModule } from './edge-render.js';
import { buildRouteModule } from './route-module-store.js';

/** PUT: the body is the bare module object; it replaces the module wholesale and answers it (200). */
async function replace(ctx: RequestContext, name: RouteModuleName): Promise<Reply> {
  const edgeId = ctx.params['edge_id']!;
  const routeId = ctx.params['id']!;
  findRoute(findEdge(ctx, edgeId), routeId);
  if (name === 'saml') rejectSamlGeneratedFields(ctx.body, 'body');
  const input = parseOrThrow(ROUTE_MODULES[name].input, ctx.body);
  validateRouteModule(name, input, 'body');
  const given = { [name]: input } as RouteModuleInputs;
  // Reported as `body.<field>`, not `body.<module>.<field>`: the body is the module itself.
  const check = () => {
    const edge = findEdge(ctx, edgeId);
    checkRouteModulesState(ctx, edge, given, () => 'body');
    return { edge, route: findRoute(edge, routeId) };
  };
  check();
  const stored = await buildRouteModule(name, input, {
    edge: findEdge(ctx, edgeId),
    routeId,
    now: ctx.services.now(),
  });
  const { edge, route } = check();
  saveEdge(ctx, withRoute(edge, { ...route, modules: { ...route.modules, [name]: stored } }));
  return {
    status: 200,
    body: renderRouteModule(name, stored, ctx.baseUrl),
  };
}

/** PUT/GET/DELETE /edges/https/{edge_id}/routes/{id}/{module} for each of the 13 route modules. */
export function routeModuleRoutes(): RouteSpec[] {
  const params = { edge_id: ID_PREFIX.httpsEdge, id: ID_PREFIX.httpsEdgeRoute };
  return ROUTE_MODULE_NAMES.flatMap((name): RouteSpec[] => {
    const path = `/edges/https/:edge_id/routes/:id/${name}`;
    return [
      { method: 'PUT', path, params, handler: (ctx) => replace(ctx, name) },
      {
        method: 'GET',
        path,
        params,
        handler(ctx): Reply {
          const route = findRoute(findEdge(ctx, ctx.params['edge_id']!), ctx.params['id']!);
          const stored = route.modules[name];
          if (stored === null) {
            throw new MockError('ERR_350', `module ${name} is not configured on route ${route.id}`, {
              module: name,
            });
          }
          return { status: 200, body: renderRouteModule(name, stored, ctx.baseUrl) };
        },
      },
      {
        method: 'DELETE',
        path,
        params,
        handler(ctx): Reply {
          const edge = findEdge(ctx, ctx.params['edge_id']!);
          const route = findRoute(edge, ctx.params['id']!);
          saveEdge(ctx, withRoute(edge, { ...route, modules: { ...route.modules, [name]: null } }));
          return { status: 204 };
        },
      },
    ];
  });
}
