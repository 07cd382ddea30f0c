import {
  MASTERS_GROUP,
  nonResourceRuleMatches,
  ruleMatches,
  type Decision,
  type Identity,
  type NonResourceAttributes,
  type PolicyRule,
  type RequestAttributes,
  type RuleVerb,
} from './auth.js';
import { policyRuleSchema, roleRefSchema, subjectSchema, type RbacSubject } from './resources/rbac-schema.js';
import type { KubeObject } from './types.js';
import { z } from 'zod';

/**
 * The RBAC authorizer (plugin/pkg/auth/authorizer/rbac), as a pure function of the stored
 * objects plus the part of the bootstrap policy every cluster has (below): a ClusterRoleBinding
 * grants its ClusterRole's rules everywhere; a RoleBinding grants its Role's or ClusterRole's
 * rules in the binding's namespace only. A binding whose role does not exist grants nothing.
 * Aggregated ClusterRoles are not expanded.
 */

export interface RbacObjects {
  roles: readonly KubeObject[];
  clusterRoles: readonly KubeObject[];
  roleBindings: readonly KubeObject[];
  clusterRoleBindings: readonly KubeObject[];
}

type Who = Pick<Identity, 'user' | 'groups'>;

const subjectsSchema = z.array(subjectSchema).catch([]);
const rulesSchema = z.array(policyRuleSchema).catch([]);

const DISCOVERY_URLS = [
  '/api',
  '/api/*',
  '/apis',
  '/apis/*',
  '/healthz',
  '/livez',
  '/openapi',
  '/openapi/*',
  '/readyz',
  '/version',
  '/version/',
];
const PUBLIC_INFO_URLS = ['/healthz', '/livez', '/readyz', '/version', '/version/'];

function bootstrapRole(name: string, rules: z.input<typeof policyRuleSchema>[]): KubeObject {
  return { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name }, rules };
}
function bootstrapBinding(name: string, groups: string[]): KubeObject {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
    subjects: groups.map((g) => ({ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: g })),
  };
}

/**
 * The bootstrap ClusterRoles and ClusterRoleBindings a real server creates at start that decide
 * what any client may do: cluster-admin for `system:masters`, and for every authenticated user
 * the self reviews (system:basic-user) and discovery (system:discovery,
 * system:public-info-viewer). kubesim applies them without storing them.
 */
export const BOOTSTRAP_POLICY: RbacObjects = {
  roles: [],
  roleBindings: [],
  clusterRoles: [
    bootstrapRole('cluster-admin', [
      { apiGroups: ['*'], resources: ['*'], verbs: ['*'] },
      { nonResourceURLs: ['*'], verbs: ['*'] },
    ]),
    bootstrapRole('system:basic-user', [
      { apiGroups: ['authentication.k8s.io'], resources: ['selfsubjectreviews'], verbs: ['create'] },
      {
        apiGroups: ['authorization.k8s.io'],
        resources: ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'],
        verbs: ['create'],
      },
    ]),
    bootstrapRole('system:discovery', [{ nonResourceURLs: DISCOVERY_URLS, verbs: ['get'] }]),
    bootstrapRole('system:public-info-viewer', [{ nonResourceURLs: PUBLIC_INFO_URLS, verbs: ['get'] }]),
  ],
  clusterRoleBindings: [
    bootstrapBinding('cluster-admin', [MASTERS_GROUP]),
    bootstrapBinding('system:basic-user', ['system:authenticated']),
    bootstrapBinding('system:discovery', ['system:authenticated']),
    bootstrapBinding('system:public-info-viewer', ['system:authenticated', 'system:unauthenticated']),
  ],
};

/** rbac.appliesTo: the subject of the binding that names the identity, if any. */
function subjectFor(
  subjects: RbacSubject[],
  who: Who,
  bindingNamespace: string | undefined,
): RbacSubject | undefined {
  return subjects.find((s) => {
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
  });
}

/** describeSubject of pkg/registry/rbac/validation. */
function describeSubject(s: RbacSubject, bindingNamespace: string): string {
  if (s.kind === 'ServiceAccount') return `${s.kind} "${s.name}/${s.namespace || bindingNamespace}"`;
  return `${s.kind} "${s.name}"`;
}

/** A role's rules as stored (rbac/v1 PolicyRule), with where they come from. */
interface Grant {
  rules: z.infer<typeof policyRuleSchema>[];
  /** Undefined: everywhere (a ClusterRoleBinding). */
  namespace: string | undefined;
  /** `ClusterRoleBinding "x" of ClusterRole "y" to Group "z"`, as the authorizer's reason says it. */
  source: string;
}

function grantsFrom(objs: RbacObjects, who: Who): Grant[] {
  const byName = (list: readonly KubeObject[], name: string, ns?: string) =>
    list.find((o) => o.metadata.name === name && (ns === undefined || o.metadata.namespace === ns));
  const rulesOf = (role: KubeObject | undefined) => (role ? rulesSchema.parse(role['rules'] ?? []) : []);
  const out: Grant[] = [];
  for (const b of objs.clusterRoleBindings) {
    const ref = roleRefSchema.safeParse(b['roleRef']);
    if (!ref.success || ref.data.kind !== 'ClusterRole') continue;
    const subject = subjectFor(subjectsSchema.parse(b['subjects'] ?? []), who, undefined);
    if (!subject) continue;
    out.push({
      rules: rulesOf(byName(objs.clusterRoles, ref.data.name)),
      namespace: undefined,
      source: `ClusterRoleBinding "${b.metadata.name}" of ClusterRole "${ref.data.name}" to ${describeSubject(subject, '')}`,
    });
  }
  for (const b of objs.roleBindings) {
    const ns = b.metadata.namespace;
    const ref = roleRefSchema.safeParse(b['roleRef']);
    if (!ref.success || !ns) continue;
    const subject = subjectFor(subjectsSchema.parse(b['subjects'] ?? []), who, ns);
    if (!subject) continue;
    const role =
      ref.data.kind === 'Role'
        ? byName(objs.roles, ref.data.name, ns)
        : ref.data.kind === 'ClusterRole'
          ? byName(objs.clusterRoles, ref.data.name)
          : undefined;
    out.push({
      rules: rulesOf(role),
      namespace: ns,
      source: `RoleBinding "${b.metadata.name}/${ns}" of ${ref.data.kind} "${ref.data.name}" to ${describeSubject(subject, ns)}`,
    });
  }
  return out;
}

/** Every grant of the identity: the bootstrap policy first, then the stored objects. */
function grants(objs: RbacObjects, who: Who): Grant[] {
  return [...grantsFrom(BOOTSTRAP_POLICY, who), ...grantsFrom(objs, who)];
}

function toPolicyRule(r: z.infer<typeof policyRuleSchema>, namespace: string | undefined): PolicyRule {
  return {
    verbs: r.verbs as RuleVerb[],
    resources: r.resources ?? [],
    apiGroups: r.apiGroups ?? [],
    ...(namespace !== undefined ? { namespaces: [namespace] } : {}),
    ...(r.resourceNames?.length ? { resourceNames: r.resourceNames } : {}),
    ...(r.nonResourceURLs?.length && namespace === undefined ? { nonResourceURLs: r.nonResourceURLs } : {}),
  };
}

/**
 * Every rule the identity holds (bootstrap policy included), each limited to the namespace its
 * binding grants it in.
 */
export function rbacRulesFor(objs: RbacObjects, who: Who): PolicyRule[] {
  return grants(objs, who).flatMap((g) => g.rules.map((r) => toPolicyRule(r, g.namespace)));
}

/** The RBAC authorizer's decision on a resource or non-resource request, with its reason. */
export function rbacDecision(
  objs: RbacObjects,
  who: Who,
  a: { resource: RequestAttributes } | { nonResource: NonResourceAttributes },
): Decision {
  for (const g of grants(objs, who)) {
    for (const r of g.rules) {
      const rule = toPolicyRule(r, g.namespace);
      const ok =
        'resource' in a ? ruleMatches(rule, a.resource) : nonResourceRuleMatches(rule, a.nonResource);
      if (ok) return { allowed: true, reason: `RBAC: allowed by ${g.source}` };
    }
  }
  return { allowed: false, reason: '' };
}

/** What SelfSubjectRulesReview lists: rbac/v1 rules as stored, split by kind. */
export interface RulesReview {
  resourceRules: { verbs: string[]; apiGroups?: string[]; resources?: string[]; resourceNames?: string[] }[];
  nonResourceRules: { verbs: string[]; nonResourceURLs?: string[] }[];
}

/** RBAC's RulesFor(user, namespace): cluster-wide grants and those of the namespace's RoleBindings. */
export function rbacRulesReview(objs: RbacObjects, who: Who, namespace: string): RulesReview {
  const out: RulesReview = { resourceRules: [], nonResourceRules: [] };
  for (const g of grants(objs, who)) {
    if (g.namespace !== undefined && g.namespace !== namespace) continue;
    for (const r of g.rules) {
      if (r.resources?.length) {
        out.resourceRules.push({
          verbs: r.verbs,
          ...(r.apiGroups?.length ? { apiGroups: r.apiGroups } : {}),
          resources: r.resources,
          ...(r.resourceNames?.length ? { resourceNames: r.resourceNames } : {}),
        });
      }
      if (r.nonResourceURLs?.length)
        out.nonResourceRules.push({ verbs: r.verbs, nonResourceURLs: r.nonResourceURLs });
    }
  }
  return out;
}
