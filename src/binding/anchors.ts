import type { Service } from '../kube/objects.js';
import { parseEndpointUrl } from './endpoint-url.js';
import { ENDPOINT_URL_ANNOTATION, ROLE_INTERNAL, ROLE_LABEL } from './identity.js';

/**
 * Ownership anchored where tenants cannot write (docs/projection.md "Ownership"). Our labels can
 * be put on any Service by anyone with patch rights on it, so outside the operator namespace they
 * are never enough: a Service there is ours only when one of our internal Services, in the
 * operator namespace, names it (its `endpoint-binder.io/endpoint-url` is `…://<name>.<namespace>`).
 * Pure.
 */

export interface Anchored {
  /** Services the controller may update and delete: the operator namespace's, and named aliases. */
  trusted: Service[];
  /** Outside the operator namespace, carrying our labels, named by no internal Service: left alone. */
  unanchored: Service[];
}

/** `namespace/name` of every alias our internal Services (in `operatorNamespace`) name. */
export function namedAliases(owned: readonly Service[], operatorNamespace: string): Set<string> {
  const named = new Set<string>();
  for (const s of owned) {
    if (s.metadata.namespace !== operatorNamespace) continue;
    if (s.metadata.labels?.[ROLE_LABEL] !== ROLE_INTERNAL) continue;
    const url = s.metadata.annotations?.[ENDPOINT_URL_ANNOTATION];
    if (url === undefined) continue;
    const parsed = parseEndpointUrl(url);
    if (parsed.ok) named.add(`${parsed.value.namespace}/${parsed.value.name}`);
  }
  return named;
}

/**
 * `wroteIt` tells a Service this process created or updated itself (same uid): trusted while its
 * internal Service is briefly missing (deleted by someone, being re-created).
 */
export function anchorOwned(
  owned: readonly Service[],
  operatorNamespace: string,
  wroteIt: (svc: Service) => boolean = () => false,
): Anchored {
  const named = namedAliases(owned, operatorNamespace);
  const trusted: Service[] = [];
  const unanchored: Service[] = [];
  for (const s of owned) {
    const ns = s.metadata.namespace;
    if (ns === operatorNamespace || named.has(`${ns}/${s.metadata.name}`) || wroteIt(s)) trusted.push(s);
    else unanchored.push(s);
  }
  return { trusted, unanchored };
}
