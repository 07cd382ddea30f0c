import { parseEndpointUrl } from './endpoint-url.js';
import { ENDPOINT_URL_ANNOTATION } from './identity.js';
import type { PlanAction } from './types.js';

/**
 * The order in which a pass takes its creates when it may take only so many (one write-ahead
 * record write carries a bounded number of entries; the rest wait for the next pass): each new
 * alias followed by the new internal Services that name it, then internal Services whose alias
 * exists already, then anything else. An internal Service is then never created before its alias
 * (it would lack the alias's uid and cost a second write, an update, once the alias exists), and
 * a cut between two passes leaves whole endpoints projected. Keys, in that order. Pure.
 */
export function createsInPairs(actions: readonly PlanAction[], operatorNamespace: string): string[] {
  const aliases: string[] = [];
  const internalsByAlias = new Map<string, string[]>();
  const rest: string[] = [];
  for (const a of actions) {
    if (a.op !== 'create' && a.op !== 'recreate') continue;
    if (a.desired.metadata.namespace !== operatorNamespace) {
      aliases.push(a.key);
      continue;
    }
    const url = parseEndpointUrl(a.desired.metadata.annotations?.[ENDPOINT_URL_ANNOTATION] ?? '');
    if (!url.ok) {
      rest.push(a.key);
      continue;
    }
    const alias = `${url.value.namespace}/${url.value.name}`;
    const named = internalsByAlias.get(alias);
    if (named) named.push(a.key);
    else internalsByAlias.set(alias, [a.key]);
  }
  const out: string[] = [];
  for (const alias of aliases) {
    out.push(alias);
    for (const key of internalsByAlias.get(alias) ?? []) out.push(key);
    internalsByAlias.delete(alias);
  }
  for (const keys of internalsByAlias.values()) out.push(...keys);
  out.push(...rest);
  return out;
}
