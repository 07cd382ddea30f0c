import {
  NAMEID_FORMAT_PERSISTENT,
  type RouteModuleInput,
  type RouteModuleName,
} from '../../api/schemas/modules/index.js';
import type { RouteModuleInputs } from '../validation/edges/route-modules.js';
import type { EdgeRecord, RouteModules, StoredRouteModules } from './edge-records.js';
import { generateSamlServiceProvider } from './saml-sp.js';

/** Documented circuit breaker defaults for fields a request leaves out. */
export const CIRCUIT_BREAKER_DEFAULTS = {
  tripped_duration: 10,
  rolling_window: 10,
  num_buckets: 10,
  volume_threshold: 20,
  error_threshold_percentage: 0.5,
} as const;

export interface ModuleBuildContext {
  edge: Pick<EdgeRecord, 'id' | 'hostports'>;
  routeId: string;
  now: number;
}

function withoutEnabled<T extends { enabled?: boolean | undefined }>(input: T): Omit<T, 'enabled'> {
  const { enabled: _enabled, ...rest } = input;
  return rest;
}

/**
 * A validated module request turned into what is stored: `enabled` defaults to true (for every
 * module, user_agent_filter included), documented defaults are filled in, and SAML gets its
 * server-generated service provider fields.
 */
export async function buildRouteModule<N extends RouteModuleName>(
  name: N,
  value: RouteModuleInput<N>,
  bc: ModuleBuildContext,
): Promise<StoredRouteModules[N]> {
  const enabled = value.enabled ?? true;
  const built = await (async (): Promise<StoredRouteModules[RouteModuleName]> => {
    switch (name) {
      case 'circuit_breaker': {
        const v = value as RouteModuleInput<'circuit_breaker'>;
        return {
          enabled,
          ...CIRCUIT_BREAKER_DEFAULTS,
          ...withoutEnabled(v),
        };
      }
      case 'request_headers':
      case 'response_headers': {
        const v = value as RouteModuleInput<'request_headers'>;
        return { enabled, add: v.add ?? {}, remove: v.remove ?? [] };
      }
      case 'webhook_verification': {
        const v = value as RouteModuleInput<'webhook_verification'>;
        return {
          enabled,
          provider: v.provider.toLowerCase(),
          ...(v.secret !== undefined ? { secret: v.secret } : {}),
        };
      }
      case 'user_agent_filter': {
        const v = value as RouteModuleInput<'user_agent_filter'>;
        return { enabled, allow: v.allow ?? [], deny: v.deny ?? [] };
      }
      case 'saml': {
        const v = value as RouteModuleInput<'saml'>;
        const sp = await generateSamlServiceProvider(bc.edge, bc.routeId, bc.now);
        return {
          enabled,
          ...withoutEnabled(v),
          nameid_format: v.nameid_format ?? NAMEID_FORMAT_PERSISTENT,
          ...sp,
        };
      }
      default:
        // backend, ip_restriction, compression, oauth, oidc, websocket_tcp_converter, traffic_policy
        return {
          enabled,
          ...withoutEnabled(value),
        };
    }
  })();
  return built as StoredRouteModules[N];
}

/** Builds every module given in a route create or update; absent ones are left out. */
export async function buildRouteModules(
  inputs: RouteModuleInputs,
  bc: ModuleBuildContext,
): Promise<Partial<RouteModules>> {
  const out: Partial<Record<RouteModuleName, unknown>> = {};
  for (const [name, value] of Object.entries(inputs) as [RouteModuleName, unknown][]) {
    if (value !== undefined)
      out[name] = await buildRouteModule(name, value as RouteModuleInput<typeof name>, bc);
  }
  return out as Partial<RouteModules>;
}
