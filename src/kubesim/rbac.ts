import type { Identity, PolicyRule } from './auth.js';
import { policyRuleSchema, roleRefSchema, subjectSchema, type RbacSubject } from './resources/rbac-schema.js';
import type { KubeObject, Verb } from './types.js';
import { z } from 'zod';

/**
 * The RBAC authorizer (plugin/pkg/auth/authorizer/rbac), as a pure function of the stored
 * objects: a ClusterRoleBinding grants its ClusterRole's rules everywhere; a RoleBinding grants
 * its Role's or ClusterRole's rules in the binding's namespace only. A binding whose role does not
 * exist grants nothing. Aggregated ClusterRoles are not expanded.
 */

export interface RbacObjects {
  roles: readonly KubeObject[];
  clusterRoles: readonly KubeObject[];
  roleBindings: readonly KubeObject[];
  clusterRoleBindings: readonly KubeObject[];
}

const subjectsSchema = z.array(subjectSchema).catch([]);
const rulesSchema = z.array(policyRuleSchema).catch([]);

/** rbac.appliesTo: does this subject name the identity? */
function appliesTo(
  s: RbacSubject,
  who: Pick<Identity, 'user' | 'groups'>,
  bindingNamespace: string | undefined,
): boolean {
  switch (s.kind) {
    case 'User':
      return s.name === who.user;
    case 'Group':
      return who.groups.includes(s.name);
    case 'ServiceAccount': {
      const ns = s.namespace ?? bindingNamespace ?? '';
      return ns !== '' && who.user === `system:serviceaccount:${ns}:${s.name}`;
    }
    default:
      return false;
  }
}

function toRules(role: KubeObject | undefined, namespace: string | undefined): PolicyRule[] {
  if (!role) return [];
  return rulesSchema.parse(role['rules'] ?? []).flatMap((r) =>
    // A non-resource rule never matches a resource request.
    r.nonResourceURLs?.length && !r.resources?.length
      ? []
      : [
          {
            verbs: r.verbs as (Verb | '*')[],
            resources: r.resources ?? [],
            apiGroups: r.apiGroups ?? [],
            ...(namespace !== undefined ? { namespaces: [namespace] } : {}),
            ...(r.resourceNames?.length ? { resourceNames: r.resourceNames } : {}),
          },
        ],
  );
}

/** Every rule the identity holds, each limited to the namespace its binding grants it in. */
export function rbacRulesFor(objs: RbacObjects, who: Pick<Identity, 'user' | 'groups'>): PolicyRule[] {
  const byName = (list: readonly KubeObject[], name: string, ns?: string) =>
    list.find((o) => o.metadata.name === name && (ns === undefined || o.metadata.namespace === ns));
  const out: PolicyRule[] = [];
  for (const b of objs.clusterRoleBindings) {
    const ref = roleRefSchema.safeParse(b['roleRef']);
    if (!ref.success || ref.data.kind !== 'ClusterRole') continue;
    if (!subjectsSchema.parse(b['subjects'] ?? []).some((s) => appliesTo(s, who, undefined))) continue;
    out.push(...toRules(byName(objs.clusterRoles, ref.data.name), undefined));
  }
  for (const b of objs.roleBindings) {
    const ns = b.metadata.namespace;
    const ref = roleRefSchema.safeParse(b['roleRef']);
    if (!ref.success || !ns) continue;
    if (!subjectsSchema.parse(b['subjects'] ?? []).some((s) => appliesTo(s, who, ns))) continue;
    const role =
      ref.data.kind === 'Role'
        ? byName(objs.roles, ref.data.name, ns)
        : ref.data.kind === 'ClusterRole'
          ? byName(objs.clusterRoles, ref.data.name)
          : undefined;
    out.push(...toRules(role, ns));
  }
  return out;
}
