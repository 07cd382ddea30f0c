import type { MatchResources, NamedRuleWithOperations } from '../resources/admission-schema.js';
import { matchesLabelSelector, type LabelSelectorObject } from '../selectors.js';
import type { AdmissionAttributes } from './attributes.js';

/**
 * Which requests a policy's matchConstraints and a binding's matchResources select
 * (k8s.io/apiserver/pkg/admission/plugin/policy/matching and webhook/predicates/rules): namespace
 * selector, object selector, excluded rules, then resource rules. Pure.
 */

/** The labels of the namespace a request is in (undefined when it does not exist). */
export type NamespaceLabels = (namespace: string) => Record<string, string> | undefined;

function isNamespaceResource(a: AdmissionAttributes): boolean {
  return a.def.group === '' && a.def.version === 'v1' && a.def.plural === 'namespaces';
}

function exactOrWildcard(items: string[] | undefined, requested: string): boolean {
  return (items ?? []).some((i) => i === '*' || i === requested);
}

/** rules.Matcher.scope: `Namespaced` never matches a Namespace itself, `Cluster` always does. */
function scopeMatches(scope: string | undefined, a: AdmissionAttributes): boolean {
  if (scope === undefined || scope === '*') return true;
  if (scope === 'Namespaced') return !isNamespaceResource(a) && a.namespace !== '';
  if (scope === 'Cluster') return isNamespaceResource(a) || a.namespace === '';
  return false;
}

function resourceMatches(resources: string[] | undefined, a: AdmissionAttributes): boolean {
  return (resources ?? []).some((r) => {
    const slash = r.indexOf('/');
    const res = slash < 0 ? r : r.slice(0, slash);
    const sub = slash < 0 ? '' : r.slice(slash + 1);
    return (res === '*' || res === a.def.plural) && (sub === '*' || sub === a.subresource);
  });
}

export function ruleMatches(rule: NamedRuleWithOperations, a: AdmissionAttributes): boolean {
  if (!scopeMatches(rule.scope, a)) return false;
  if (!exactOrWildcard(rule.operations, a.operation)) return false;
  if (!exactOrWildcard(rule.apiGroups, a.def.group)) return false;
  if (!exactOrWildcard(rule.apiVersions, a.def.version)) return false;
  if (!resourceMatches(rule.resources, a)) return false;
  // An empty name list matches every name; a create by generateName has no name to match.
  const names = rule.resourceNames ?? [];
  return names.length === 0 || names.includes(a.name);
}

function isEmptySelector(s: LabelSelectorObject | undefined): boolean {
  return !s || (Object.keys(s.matchLabels ?? {}).length === 0 && (s.matchExpressions ?? []).length === 0);
}

/** MatchNamespaceSelector: cluster-scoped requests (but Namespaces) are never exempted. */
function namespaceSelectorMatches(
  mr: MatchResources,
  a: AdmissionAttributes,
  labelsOf: NamespaceLabels,
): boolean {
  if (isEmptySelector(mr.namespaceSelector)) return true;
  if (isNamespaceResource(a)) {
    const ns = a.object ?? a.oldObject;
    return matchesLabelSelector(mr.namespaceSelector, ns?.metadata.labels);
  }
  if (a.namespace === '') return true;
  return matchesLabelSelector(mr.namespaceSelector, labelsOf(a.namespace));
}

/** MatchObjectSelector: the new or the old object's labels. */
function objectSelectorMatches(mr: MatchResources, a: AdmissionAttributes): boolean {
  if (isEmptySelector(mr.objectSelector)) return true;
  return [a.object, a.oldObject].some(
    (o) => o !== null && matchesLabelSelector(mr.objectSelector, o.metadata.labels),
  );
}

/**
 * matching.Matcher.Matches. Without resourceRules (a binding's matchResources may leave them
 * out) every resource matches that the selectors and exclusions let through.
 */
export function matchesResources(
  mr: MatchResources,
  a: AdmissionAttributes,
  labelsOf: NamespaceLabels,
): boolean {
  if (!namespaceSelectorMatches(mr, a, labelsOf)) return false;
  if (!objectSelectorMatches(mr, a)) return false;
  if ((mr.excludeResourceRules ?? []).some((r) => ruleMatches(r, a))) return false;
  const rules = mr.resourceRules ?? [];
  return rules.length === 0 || rules.some((r) => ruleMatches(r, a));
}

/**
 * The admission configuration kinds no policy applies to
 * (rules.IsExemptAdmissionConfigurationResource), so a bad policy can always be fixed.
 */
export function isExemptFromPolicies(a: AdmissionAttributes): boolean {
  return (
    a.def.group === 'admissionregistration.k8s.io' &&
    [
      'validatingwebhookconfigurations',
      'mutatingwebhookconfigurations',
      'validatingadmissionpolicies',
      'validatingadmissionpolicybindings',
      'mutatingadmissionpolicies',
      'mutatingadmissionpolicybindings',
    ].includes(a.def.plural)
  );
}
