import type { Service } from '../../kube/objects.js';
import { parseEndpointUrl } from '../endpoint-url.js';
import { ALIAS_ANNOTATION, ENDPOINT_URL_ANNOTATION, ROLE_INTERNAL, ROLE_LABEL } from '../identity.js';
import type { PlanAction } from '../types.js';

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

/** An internal Service by place and role label (whether it is ours is the proofs' question). */
export function isInternal(s: Service, operatorNamespace: string): boolean {
  return s.metadata.namespace === operatorNamespace && s.metadata.labels?.[ROLE_LABEL] === ROLE_INTERNAL;
}

/**
 * The `namespace/name` an internal Service's endpoint URL names. Cached per object: the cache
 * hands out the same objects pass after pass, and parsing 10,000 URLs each pass showed in the
 * 10,000-endpoint profile.
 */
const aliasKeys = new WeakMap<Service, string | null>();
function aliasKeyOf(s: Service): string | undefined {
  let key = aliasKeys.get(s);
  if (key === undefined) {
    const url = s.metadata.annotations?.[ENDPOINT_URL_ANNOTATION];
    const parsed = url === undefined ? undefined : parseEndpointUrl(url);
    key = parsed?.ok ? `${parsed.value.namespace}/${parsed.value.name}` : null;
    aliasKeys.set(s, key);
  }
  return key ?? undefined;
}

/**
 * Every alias our internal Services (in `operatorNamespace`) name, `namespace/name` to the uids
 * they record for it (`endpoint-binder.io/alias`; empty when none records one, as before an
 * upgrade's first pass).
 */
export function namedAliases(
  owned: readonly Service[],
  operatorNamespace: string,
  isOurs: (svc: Service) => boolean = () => true,
): Map<string, Set<string>> {
  const named = new Map<string, Set<string>>();
  for (const s of owned) {
    if (!isInternal(s, operatorNamespace) || !isOurs(s)) continue;
    const key = aliasKeyOf(s);
    if (key === undefined) continue;
    const uids = named.get(key) ?? new Set<string>();
    named.set(key, uids);
    const alias = s.metadata.annotations?.[ALIAS_ANNOTATION];
    if (alias?.startsWith(`${key}/`)) uids.add(alias.slice(key.length + 1));
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
  intents: ReadonlySet<string> = new Set(),
): Anchored {
  // A Service at a name the install record announced before its create (a write-ahead entry,
  // docs/controller.md "Ownership") is ours whatever happened after: a leader that died between
  // the create and recording the uid leaves nothing a successor cannot prove.
  const intended = (s: Service): boolean => intents.has(`${s.metadata.namespace}/${s.metadata.name}`);
  // An internal Service counts only when the install record lists its uid or its intent (or this
  // process wrote it): a hand-made one with our labels claims no port and names no alias.
  const recordedInternal = (s: Service): boolean =>
    recorded === undefined ||
    (s.metadata.uid !== undefined && recorded.has(s.metadata.uid)) ||
    intended(s) ||
    wroteIt(s);
  const named = namedAliases(owned, operatorNamespace, recordedInternal);
  const trusted: Service[] = [];
  const unanchored: Service[] = [];
  // An alias is ours when one of our internal Services records its uid. Without a list of
  // internal Services (an upgrade from a version that recorded neither), the name is enough
  // once: the leader's pass then records the uids.
  const isNamedAlias = (s: Service): boolean => {
    const uids = named.get(`${s.metadata.namespace}/${s.metadata.name}`);
    if (uids === undefined) return false;
    return recorded === undefined || (s.metadata.uid !== undefined && uids.has(s.metadata.uid));
  };
  for (const s of owned) {
    const ns = s.metadata.namespace;
    const ok = isInternal(s, operatorNamespace)
      ? recordedInternal(s)
      : ns === operatorNamespace || isNamedAlias(s) || intended(s) || wroteIt(s);
    if (ok) trusted.push(s);
    else unanchored.push(s);
  }
  return { trusted, unanchored };
}

/**
 * The internal Services written in the same pass as the alias they name learn its uid from the
 * alias's create (aliases are written first), so an alias and its internal Service cost one write
 * each. `created` maps an alias's `namespace/name` to the uid the server gave it. Pure.
 */
export function withCreatedAliases(
  actions: readonly PlanAction[],
  created: ReadonlyMap<string, string>,
  operatorNamespace: string,
): PlanAction[] {
  if (created.size === 0) return [...actions];
  const fill = (svc: Service): Service => {
    if (!isInternal(svc, operatorNamespace)) return svc;
    const url = parseEndpointUrl(svc.metadata.annotations?.[ENDPOINT_URL_ANNOTATION] ?? '');
    if (!url.ok) return svc;
    const key = `${url.value.namespace}/${url.value.name}`;
    const uid = created.get(key);
    if (uid === undefined) return svc;
    return {
      ...svc,
      metadata: {
        ...svc.metadata,
        annotations: { ...svc.metadata.annotations, [ALIAS_ANNOTATION]: `${key}/${uid}` },
      },
    };
  };
  return actions.map((a) => {
    switch (a.op) {
      case 'create':
        return { ...a, desired: fill(a.desired) };
      case 'update':
        return { ...a, desired: fill(a.desired), object: fill(a.object) };
      case 'recreate':
        return { ...a, desired: fill(a.desired) };
      case 'delete':
        return a;
    }
  });
}
