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

/**
 * The uids the install record lists as internal Services the controller created (undefined: the
 * record has no list yet, as right after an upgrade; then every labelled internal Service counts).
 */
export type RecordedInternal = ReadonlySet<string> | undefined;

function isInternal(s: Service, operatorNamespace: string): boolean {
  return s.metadata.namespace === operatorNamespace && s.metadata.labels?.[ROLE_LABEL] === ROLE_INTERNAL;
}

/** `namespace/name` of every alias our internal Services (in `operatorNamespace`) name. */
export function namedAliases(
  owned: readonly Service[],
  operatorNamespace: string,
  isOurs: (svc: Service) => boolean = () => true,
): Set<string> {
  const named = new Set<string>();
  for (const s of owned) {
    if (!isInternal(s, operatorNamespace) || !isOurs(s)) continue;
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
  recorded: RecordedInternal = undefined,
): Anchored {
  // An internal Service counts only when the install record lists its uid (or this process
  // wrote it): a hand-made one with our labels claims no port and names no alias.
  const recordedInternal = (s: Service): boolean =>
    recorded === undefined || (s.metadata.uid !== undefined && recorded.has(s.metadata.uid)) || wroteIt(s);
  const named = namedAliases(owned, operatorNamespace, recordedInternal);
  const trusted: Service[] = [];
  const unanchored: Service[] = [];
  for (const s of owned) {
    const ns = s.metadata.namespace;
    const ok = isInternal(s, operatorNamespace)
      ? recordedInternal(s)
      : ns === operatorNamespace || named.has(`${ns}/${s.metadata.name}`) || wroteIt(s);
    if (ok) trusted.push(s);
    else unanchored.push(s);
  }
  return { trusted, unanchored };
}
