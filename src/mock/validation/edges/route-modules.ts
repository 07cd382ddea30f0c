import type { RouteModuleInput, RouteModuleName } from '../../../api/schemas/modules/index.js';
import { validateHeaders } from './headers.js';
import { validateIdList } from './id-lists.js';
import { validateOAuth } from './oauth.js';
import { validateOidc } from './oidc.js';
import { validateSaml } from './saml.js';
import { validateTrafficPolicy } from './traffic-policy.js';
import { validateUserAgentFilter } from './user-agent-filter.js';
import { validateWebhook } from './webhook.js';

export type RouteModuleInputs = { [N in RouteModuleName]?: RouteModuleInput<N> | undefined };

/**
 * The rules of one module that need nothing but the module itself. Rules that depend on account
 * state (IP policies exist, TLS passthrough) are in the resource handlers.
 */
export function validateRouteModule<N extends RouteModuleName>(
  name: N,
  value: RouteModuleInput<N>,
  field: string,
): void {
  const v = value as RouteModuleInputs[RouteModuleName];
  switch (name) {
    case 'ip_restriction':
      validateIdList((v as RouteModuleInput<'ip_restriction'>).ip_policy_ids, `${field}.ip_policy_ids`, {
        code: 'ERR_398',
        rule: 'must name at least one IP policy',
      });
      return;
    case 'request_headers':
    case 'response_headers':
      validateHeaders(v as RouteModuleInput<'request_headers'>, field);
      return;
    case 'webhook_verification':
      validateWebhook(v as RouteModuleInput<'webhook_verification'>, field);
      return;
    case 'oauth':
      validateOAuth(v as RouteModuleInput<'oauth'>, field);
      return;
    case 'saml':
      validateSaml(v as RouteModuleInput<'saml'>, field);
      return;
    case 'oidc':
      validateOidc(v as RouteModuleInput<'oidc'>, field);
      return;
    case 'user_agent_filter':
      validateUserAgentFilter(v as RouteModuleInput<'user_agent_filter'>, field);
      return;
    case 'traffic_policy':
      validateTrafficPolicy(v as RouteModuleInput<'traffic_policy'>, field);
      return;
    default:
      // backend, circuit_breaker, compression, websocket_tcp_converter: the schema covers them.
      return;
  }
}

/** Every module given in a route create or update. */
export function validateRouteModules(input: RouteModuleInputs, field: string): void {
  for (const [name, value] of Object.entries(input) as [
    RouteModuleName,
    RouteModuleInputs[RouteModuleName],
  ][]) {
    if (value !== undefined)
      validateRouteModule(name, value as RouteModuleInput<typeof name>, `${field}.${name}`);
  }
}
