import type { RouteModuleName } from '../../api/schemas/modules/index.js';
import type { RequestContext } from '../http/context.js';
import { fieldError } from '../validation/edges/field-error.js';
import type { RouteModuleInputs } from '../validation/edges/route-modules.js';
import {
  MODULES_NEEDING_TRAFFIC,
  passesThrough,
  passthroughConflict,
  type PassthroughView,
} from '../validation/edges/tls.js';
import type { EdgeRecord } from './edge-records.js';

/**
 * Rules that depend on the account's state. Handlers run them after the stateless rules and again
 * right before storing, so a failed request stores nothing.
 */

/** A hostport belongs to at most one edge of the account (other accounts are not looked at). */
export function checkHostportsFree(
  ctx: RequestContext,
  hostports: readonly string[],
  exceptEdgeId: string | undefined,
  field: string,
): void {
  for (const edge of ctx.account.collection('https_edges').values()) {
    if (edge.id === exceptEdgeId) continue;
    hostports.forEach((hp, i) => {
      if (edge.hostports.includes(hp)) {
        throw fieldError('ERR_303', `${field}[${i}]`, `"${hp}" is already served by HTTPS edge ${edge.id}`);
      }
    });
  }
}

/** Every IP policy an ip_restriction names must exist in the account when it is set. */
export function checkIpPoliciesExist(ctx: RequestContext, ids: readonly string[], field: string): void {
  const policies = ctx.account.collection('ip_policies');
  ids.forEach((id, i) => {
    if (!policies.has(id)) {
      throw fieldError('ERR_397', `${field}[${i}]`, `IP policy ${id} does not exist in this account`);
    }
  });
}

/** Every certificate authority a mutual_tls module names must exist in the account. */
export function checkCertificateAuthoritiesExist(
  ctx: RequestContext,
  ids: readonly string[],
  field: string,
): void {
  const known = ctx.account.collection('certificate_authorities');
  ids.forEach((id, i) => {
    if (!known.has(id)) {
      throw fieldError(
        'ERR_315',
        `${field}[${i}]`,
        `certificate authority ${id} does not exist in this account`,
      );
    }
  });
}

/** No two routes of an edge share match_type and match. */
export function checkMatchUnique(
  edge: EdgeRecord,
  matchType: string,
  match: string,
  exceptRouteId: string | undefined,
  field: string,
): void {
  const other = edge.routes.find(
    (r) => r.id !== exceptRouteId && r.match_type === matchType && r.match === match,
  );
  if (other) {
    throw fieldError(
      'ERR_333',
      field,
      `route ${other.id} of this edge already matches ${matchType} "${match}"`,
    );
  }
}

/** Edge-wide TLS rule (see MODULES_NEEDING_TRAFFIC); `field` names what the request changed. */
export function checkPassthrough(view: PassthroughView, field: string): void {
  const conflict = passthroughConflict(view);
  if (conflict) {
    throw fieldError('ERR_313', field, `terminate_at "upstream" passes TLS through, but ${conflict}`);
  }
}

/** Route modules given in a request, against the edge they would join. */
export function checkRouteModulesState(
  ctx: RequestContext,
  edge: EdgeRecord,
  modules: RouteModuleInputs,
  /** Where a module sits in the body: `body.<name>` in route writes, `body` in a module PUT. */
  fieldOf: (name: RouteModuleName) => string,
): void {
  for (const [name, value] of Object.entries(modules) as [RouteModuleName, unknown][]) {
    if (value === undefined) continue;
    if (passesThrough(edge.tls_termination) && MODULES_NEEDING_TRAFFIC.has(name)) {
      throw fieldError(
        'ERR_313',
        fieldOf(name),
        `needs TLS terminated at the edge, but HTTPS edge ${edge.id} has tls_termination.terminate_at "upstream"`,
      );
    }
    if (name === 'ip_restriction') {
      const ids = (value as { ip_policy_ids: string[] }).ip_policy_ids;
      checkIpPoliciesExist(ctx, ids, `${fieldOf(name)}.ip_policy_ids`);
    }
    if (name === 'backend') {
      const id = (value as { backend_id: string }).backend_id;
      if (!ctx.account.collection('backends').has(id)) {
        throw fieldError(
          'ERR_393',
          `${fieldOf(name)}.backend_id`,
          `backend ${id} does not exist in this account`,
        );
      }
    }
  }
}
