import type { PolicyRule } from '../../src/kubesim/auth.js';
import type { Verb } from '../../src/kubesim/types.js';
import type { K8sObject } from './helm.js';

/**
 * The RBAC rules the rendered chart grants one ServiceAccount, as kubesim's authorizer takes them:
 * a RoleBinding's rules apply in its namespace only, a ClusterRoleBinding's everywhere. So tests
 * (and later the kubesim e2e) run each component with exactly the rights the chart gives it.
 */
export function kubesimRulesFor(objs: K8sObject[], sa: { name: string; namespace: string }): PolicyRule[] {
  const roles = new Map<string, K8sObject>();
  for (const o of objs) {
    if (o.kind === 'Role') roles.set(`Role/${o.metadata.namespace}/${o.metadata.name}`, o);
    if (o.kind === 'ClusterRole') roles.set(`ClusterRole//${o.metadata.name}`, o);
  }
  const out: PolicyRule[] = [];
  for (const b of objs) {
    if (b.kind !== 'RoleBinding' && b.kind !== 'ClusterRoleBinding') continue;
    const subjects = (b['subjects'] ?? []) as { kind: string; name: string; namespace?: string }[];
    if (
      !subjects.some((s) => s.kind === 'ServiceAccount' && s.name === sa.name && s.namespace === sa.namespace)
    ) {
      continue;
    }
    const ref = b['roleRef'] as { kind: string; name: string };
    const ns = b.kind === 'RoleBinding' ? b.metadata.namespace : undefined;
    const role = roles.get(`${ref.kind}/${ref.kind === 'Role' ? ns : ''}/${ref.name}`);
    if (!role)
      throw new Error(
        `${b.kind}/${b.metadata.name} refers to ${ref.kind}/${ref.name}, which is not rendered`,
      );
    for (const r of (role['rules'] ?? []) as Record<string, string[] | undefined>[]) {
      out.push({
        verbs: (r['verbs'] ?? []) as Verb[],
        resources: r['resources'] ?? [],
        apiGroups: r['apiGroups'] ?? [],
        ...(ns ? { namespaces: [ns] } : {}),
        ...(r['resourceNames'] ? { resourceNames: r['resourceNames'] } : {}),
      });
    }
  }
  return out;
}
