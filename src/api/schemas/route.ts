import { z } from 'zod';
import { Timestamp, descriptionInput, metadataInput } from './common.js';
import { ROUTE_MODULES, type RouteModuleName } from './modules/index.js';
import { codedEnum } from './modules/shared.js';

export const MATCH_TYPES = ['exact_path', 'path_prefix'] as const;
export type MatchType = (typeof MATCH_TYPES)[number];

type Outputs = { [N in RouteModuleName]: (typeof ROUTE_MODULES)[N]['output'] };
type Inputs = { [N in RouteModuleName]: (typeof ROUTE_MODULES)[N]['input'] };

function mapModules<R>(fn: <N extends RouteModuleName>(name: N) => R): Record<RouteModuleName, R> {
  return Object.fromEntries(Object.keys(ROUTE_MODULES).map((n) => [n, fn(n as RouteModuleName)])) as Record<
    RouteModuleName,
    R
  >;
}

/** Every module key of a route response: the module, or null when it is not configured. */
const moduleOutputs = mapModules((n) => ROUTE_MODULES[n].output.nullable().default(null)) as unknown as {
  [N in RouteModuleName]: z.ZodDefault<z.ZodNullable<Outputs[N]>>;
};

/** Every module key of a route request: optional, and a given module replaces the stored one. */
const moduleInputs = mapModules((n) => ROUTE_MODULES[n].input.optional()) as unknown as {
  [N in RouteModuleName]: z.ZodOptional<Inputs[N]>;
};

/** HTTPSEdgeRoute as the server answers it (unknown fields tolerated, absent modules read as null). */
export const HTTPSEdgeRoute = z.object({
  edge_id: z.string(),
  id: z.string(),
  uri: z.string(),
  created_at: Timestamp,
  match_type: z.string(),
  match: z.string(),
  description: z.string().optional(),
  metadata: z.string().optional(),
  ...moduleOutputs,
});
export type HTTPSEdgeRoute = z.infer<typeof HTTPSEdgeRoute>;

/** POST /edges/https/{edge_id}/routes. */
export const HTTPSEdgeRouteCreate = z.strictObject({
  match_type: codedEnum(MATCH_TYPES, 'ERR_331'),
  match: z.string(),
  description: descriptionInput.optional(),
  metadata: metadataInput.optional(),
  ...moduleInputs,
});
export type HTTPSEdgeRouteCreate = z.infer<typeof HTTPSEdgeRouteCreate>;

/** PATCH /edges/https/{edge_id}/routes/{id}: every field optional, at least one given. */
export const HTTPSEdgeRouteUpdate = HTTPSEdgeRouteCreate.partial();
export type HTTPSEdgeRouteUpdate = z.infer<typeof HTTPSEdgeRouteUpdate>;
