/**
 * The namespace policy: which namespaces an alias Service may be written in
 * (docs/projection.md "Namespace policy"). Pure. The people who create endpoints (account
 * members) and the people who own namespaces (the cluster's tenants) are different people, so a
 * namespace must be open to aliases by the cluster's side: by name (deny and allow lists) and by
 * its own labels (a label selector the tenant's namespace must match).
 */

/** The label tenants set on a namespace to opt out (`disabled`) or, in opt-in mode, in (`enabled`). */
export const ALIASES_LABEL = 'endpoint-binder.io/aliases';

export type SelectorOperator = 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';

export interface LabelSelectorRequirement {
  key: string;
  operator: SelectorOperator;
  values?: string[] | undefined;
}

/** Kubernetes' `LabelSelector`: every entry of both parts must hold. */
export interface NamespaceLabelSelector {
  matchLabels?: Record<string, string> | undefined;
  matchExpressions?: LabelSelectorRequirement[] | undefined;
}

export interface NamespacePolicy {
  /** Names, or prefixes written `prefix*`, where no alias is written. */
  deny: readonly string[];
  /** Names or `prefix*` entries that override `deny` (not the operator namespace, not the selector). */
  allow: readonly string[];
  /** A namespace's labels must match this. */
  selector: NamespaceLabelSelector;
}

export const DEFAULT_DENY: readonly string[] = ['kube-*', 'openshift', 'openshift-*'];

/** Default: every namespace not labelled `endpoint-binder.io/aliases: disabled` (tenants opt out). */
export const OPT_OUT_SELECTOR: NamespaceLabelSelector = {
  matchExpressions: [{ key: ALIASES_LABEL, operator: 'NotIn', values: ['disabled'] }],
};

/** Opt-in mode: only namespaces labelled `endpoint-binder.io/aliases: enabled`. */
export const OPT_IN_SELECTOR: NamespaceLabelSelector = { matchLabels: { [ALIASES_LABEL]: 'enabled' } };

export const DEFAULT_NAMESPACE_POLICY: NamespacePolicy = {
  deny: DEFAULT_DENY,
  allow: [],
  selector: OPT_OUT_SELECTOR,
};

/** Everything is open: for tests and tools that project without a cluster's consent. */
export const OPEN_NAMESPACE_POLICY: NamespacePolicy = { deny: [], allow: [], selector: {} };

export type NamespaceVerdict = { open: true } | { open: false; rule: string };

/** Does `entry` (`name` or `prefix*`) cover `namespace`? */
export function entryMatches(entry: string, namespace: string): boolean {
  return entry.endsWith('*') ? namespace.startsWith(entry.slice(0, -1)) : namespace === entry;
}

/** `name` or `prefix*`: a DNS-1123 label, or a non-empty start of one followed by `*`. */
export function namespaceEntryProblem(entry: string): string | undefined {
  const body = entry.endsWith('*') ? entry.slice(0, -1) : entry;
  if (body.length === 0) return 'must be a namespace name or a prefix followed by "*" (like "kube-*")';
  if (
    body.length > 63 ||
    !/^[a-z0-9]([-a-z0-9]*)$/.test(body) ||
    (!entry.endsWith('*') && body.endsWith('-'))
  )
    return `"${entry}" must be a namespace name or a prefix followed by "*" (lower-case letters, digits, "-")`;
  return undefined;
}

function describeRequirement(r: LabelSelectorRequirement): string {
  switch (r.operator) {
    case 'Exists':
      return r.key;
    case 'DoesNotExist':
      return `!${r.key}`;
    case 'In':
      return `${r.key} in (${(r.values ?? []).join(',')})`;
    case 'NotIn':
      return `${r.key} notin (${(r.values ?? []).join(',')})`;
  }
}

/** The selector in kubectl's `-l` syntax (`a=b,c notin (d)`), `<everything>` when empty. */
export function formatLabelSelector(s: NamespaceLabelSelector): string {
  const parts = [
    ...Object.entries(s.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`),
    ...(s.matchExpressions ?? []).map(describeRequirement),
  ];
  return parts.length === 0 ? '<everything>' : parts.join(',');
}

/** The first part of `selector` that `labels` fail, in kubectl syntax; undefined when they match. */
export function selectorMismatch(
  selector: NamespaceLabelSelector,
  labels: Readonly<Record<string, string>>,
): string | undefined {
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (labels[k] !== v) return `${k}=${v}`;
  for (const r of selector.matchExpressions ?? []) {
    const has = Object.hasOwn(labels, r.key);
    const value = labels[r.key];
    const values = r.values ?? [];
    const ok =
      r.operator === 'Exists'
        ? has
        : r.operator === 'DoesNotExist'
          ? !has
          : r.operator === 'In'
            ? has && values.includes(value!)
            : !has || !values.includes(value!);
    if (!ok) return describeRequirement(r);
  }
  return undefined;
}

/**
 * The verdict by name alone (deny, allow, the operator namespace): decidable before the
 * namespace exists, and by tools that cannot see the cluster (`selector test`).
 */
export function namespaceNameVerdict(
  policy: NamespacePolicy,
  operatorNamespace: string,
  namespace: string,
): NamespaceVerdict {
  const allowed = policy.allow.find((e) => entryMatches(e, namespace));
  // The operator namespace holds our internal Services; an alias beside them is never written.
  if (namespace === operatorNamespace)
    return {
      open: false,
      rule: `namespace "${namespace}" is the operator namespace (aliases there would sit beside the internal Services)`,
    };
  if (allowed !== undefined) return { open: true };
  const denied = policy.deny.find((e) => entryMatches(e, namespace));
  if (denied !== undefined)
    return {
      open: false,
      rule: `namespace "${namespace}" matches the deny entry "${denied}" (namespaces.deny)`,
    };
  return { open: true };
}

/**
 * The full verdict for an existing namespace with its labels. The allow list overrides the deny
 * list, not the label selector: a tenant's opt-out holds even in an allowed namespace.
 */
export function namespaceVerdict(
  policy: NamespacePolicy,
  operatorNamespace: string,
  namespace: string,
  labels: Readonly<Record<string, string>>,
): NamespaceVerdict {
  const byName = namespaceNameVerdict(policy, operatorNamespace, namespace);
  if (!byName.open) return byName;
  const failed = selectorMismatch(policy.selector, labels);
  if (failed !== undefined)
    return {
      open: false,
      rule: `namespace "${namespace}" does not match the namespace selector (namespaces.selector): its labels fail "${failed}"`,
    };
  return { open: true };
}
