import {
  MASTERS_GROUP,
  nonResourceRuleMatches,
  ruleMatches,
  type Decision,
  type Identity,
  type NonResourceAttributes,
  type RequestAttributes,
} from './auth.js';
import { rbacDecision, rbacRulesReview, type RbacObjects, type RulesReview } from './rbac.js';

/**
 * The server's authorizer chain: `system:masters` is allowed everything (the privileged-group
 * authorizer, no reason given), a static token with rules is decided by those rules plus the
 * bootstrap policy, everyone else by RBAC over the stored objects and the bootstrap policy.
 */

export type AuthorizationRequest = { resource: RequestAttributes } | { nonResource: NonResourceAttributes };

const NO_OBJECTS: RbacObjects = { roles: [], clusterRoles: [], roleBindings: [], clusterRoleBindings: [] };

export class Authorizer {
  constructor(private readonly stored: () => RbacObjects) {}

  decide(who: Identity, a: AuthorizationRequest): Decision {
    if (who.groups.includes(MASTERS_GROUP)) return { allowed: true, reason: '' };
    if (who.source.kind === 'rbac') return rbacDecision(this.stored(), who, a);
    const rules = who.source.rules;
    if (!rules) return { allowed: true, reason: '' };
    const bootstrap = rbacDecision(NO_OBJECTS, who, a);
    if (bootstrap.allowed) return bootstrap;
    const allowed = rules.some((r) =>
      'resource' in a ? ruleMatches(r, a.resource) : nonResourceRuleMatches(r, a.nonResource),
    );
    return { allowed, reason: '' };
  }

  /** What SelfSubjectRulesReview answers for this identity in this namespace. */
  rulesReview(who: Identity, namespace: string): RulesReview {
    if (who.source.kind === 'rbac' || who.groups.includes(MASTERS_GROUP))
      return rbacRulesReview(who.source.kind === 'rbac' ? this.stored() : NO_OBJECTS, who, namespace);
    const review = rbacRulesReview(NO_OBJECTS, who, namespace);
    if (!who.source.rules) {
      review.resourceRules.unshift({ verbs: ['*'], apiGroups: ['*'], resources: ['*'] });
      review.nonResourceRules.unshift({ verbs: ['*'], nonResourceURLs: ['*'] });
      return review;
    }
    for (const r of who.source.rules) {
      if (r.namespaces && !r.namespaces.includes('*') && !r.namespaces.includes(namespace)) continue;
      if (r.resources.length)
        review.resourceRules.push({
          verbs: r.verbs,
          apiGroups: r.apiGroups ?? ['*'],
          resources: r.resources,
          ...(r.resourceNames?.length ? { resourceNames: r.resourceNames } : {}),
        });
      if (r.nonResourceURLs?.length)
        review.nonResourceRules.push({ verbs: r.verbs, nonResourceURLs: r.nonResourceURLs });
    }
    return review;
  }
}
