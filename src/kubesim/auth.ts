import { errors, type ApiError } from './status.js';
import type { Verb } from './types.js';

/**
 * Bearer-token authentication and the rule matching every authorizer shares. Static tokens (the
 * `tokens` option) carry their own rules (none = admin, in `system:masters`); ServiceAccount
 * tokens and impersonated users are authorized from the stored RBAC objects (rbac.ts). A request
 * is allowed when one rule matches verb, API group, resource (with subresource), namespace and
 * (for requests that name one object) resource name, as RBAC PolicyRules do.
 */

/** What a rule can allow: a REST verb, `impersonate`, or everything. */
export type RuleVerb = Verb | 'impersonate' | '*';

export interface PolicyRule {
  /** `get`, `list`, ..., `impersonate`, or `*` (stored RBAC rules may name others; they match nothing kubesim asks). */
  verbs: RuleVerb[];
  /** Plural resource names (`services`, `leases`), `resource/subresource`, `*` or `*\/subresource`. */
  resources: string[];
  /** API groups ('' is core); undefined means any group. */
  apiGroups?: string[];
  /** Namespaces the rule applies in; undefined (or `*`) means all, including cluster scope. */
  namespaces?: string[];
  /**
   * Object names; a rule with names matches only requests that name one object: get, update,
   * patch, delete, and a list or watch with `fieldSelector=metadata.name=<n>`. Never create.
   */
  resourceNames?: string[];
  /** Non-resource paths (`/version`, `/apis/*`); such a rule matches no resource request. */
  nonResourceURLs?: string[];
}

export interface KubesimToken {
  token: string;
  user: string;
  /** undefined = admin (all rights). */
  rules?: PolicyRule[];
}

/** Who a request is from (user.Info), and where its rights come from. */
export interface Identity {
  user: string;
  groups: string[];
  uid?: string;
  extra?: Record<string, string[]>;
  /** `static`: the token's own rules (undefined = admin); `rbac`: the stored RBAC objects. */
  source: { kind: 'static'; rules?: PolicyRule[] } | { kind: 'rbac' };
  /** Set on an impersonated identity: who sent the request. */
  impersonator?: { user: string; groups: string[] };
}

export interface RequestAttributes {
  /** The authorization verb: a REST verb, or `impersonate`. */
  verb: string;
  group: string;
  resource: string;
  subresource?: string;
  namespace: string | undefined;
  name: string | undefined;
}

/** A request for a path outside the resource API (SelfSubjectAccessReview's nonResourceAttributes). */
export interface NonResourceAttributes {
  verb: string;
  path: string;
}

/** An authorizer's answer: `reason` as the RBAC authorizer words it (`RBAC: allowed by ...`). */
export interface Decision {
  allowed: boolean;
  reason: string;
}

/** Looks up tokens that are not static (ServiceAccount tokens). */
export type TokenLookup = (token: string) => Identity | undefined;

/** The group a real cluster-admin kubeconfig authenticates into; the bootstrap policy binds it to cluster-admin. */
export const MASTERS_GROUP = 'system:masters';
export const AUTHENTICATED_GROUP = 'system:authenticated';

export class Authenticator {
  private readonly byToken = new Map<string, Identity>();

  constructor(
    tokens: KubesimToken[],
    private readonly dynamic: TokenLookup = () => undefined,
  ) {
    for (const t of tokens) {
      this.byToken.set(t.token, {
        user: t.user,
        groups: t.rules ? [AUTHENTICATED_GROUP] : [MASTERS_GROUP, AUTHENTICATED_GROUP],
        source: { kind: 'static', ...(t.rules ? { rules: t.rules } : {}) },
      });
    }
  }

  /** The token's identity for an `Authorization` header; undefined means 401. */
  authenticate(header: string | undefined): Identity | undefined {
    const m = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
    if (!m?.[1]) return undefined;
    return this.byToken.get(m[1]) ?? this.dynamic(m[1]);
  }
}

/** rbac/v1 ResourceMatches: `*`, `resource`, `resource/sub` and `*\/sub`. */
function resourceMatches(resources: string[], a: RequestAttributes): boolean {
  const full = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  return resources.some(
    (r) => r === '*' || r === full || (a.subresource !== undefined && r === `*/${a.subresource}`),
  );
}

function verbMatches(verbs: readonly string[], verb: string): boolean {
  return verbs.includes('*') || verbs.includes(verb);
}

export function ruleMatches(rule: PolicyRule, a: RequestAttributes): boolean {
  const any = (list: string[] | undefined, value: string) =>
    !list || list.includes('*') || list.includes(value);
  if (!verbMatches(rule.verbs, a.verb)) return false;
  if (!resourceMatches(rule.resources, a)) return false;
  if (!any(rule.apiGroups, a.group)) return false;
  if (rule.namespaces && !rule.namespaces.includes('*')) {
    if (!a.namespace || !rule.namespaces.includes(a.namespace)) return false;
  }
  if (rule.resourceNames?.length) {
    if (!a.name || !rule.resourceNames.includes(a.name)) return false;
  }
  return true;
}

/** rbac/v1 NonResourceURLMatches: exact, `*`, or a prefix ending in `*`. */
export function nonResourceRuleMatches(rule: PolicyRule, a: NonResourceAttributes): boolean {
  if (!verbMatches(rule.verbs, a.verb)) return false;
  return (rule.nonResourceURLs ?? []).some(
    (u) => u === '*' || u === a.path || (u.endsWith('*') && a.path.startsWith(u.slice(0, -1))),
  );
}

export function allowedByRules(rules: readonly PolicyRule[], a: RequestAttributes): boolean {
  return rules.some((r) => ruleMatches(r, a));
}

/** The authorizer's message for a denied request (responsewriters.forbiddenMessage). */
export function forbiddenMessage(identity: Pick<Identity, 'user'>, a: RequestAttributes): string {
  const scope = a.namespace ? `in the namespace "${a.namespace}"` : 'at the cluster scope';
  const resource = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  return `User "${identity.user}" cannot ${a.verb} resource "${resource}" in API group "${a.group}" ${scope}`;
}

/** The RBAC denial exactly as the apiserver words it. */
export function forbidden(identity: Pick<Identity, 'user'>, a: RequestAttributes): ApiError {
  return errors.forbidden({ group: a.group, plural: a.resource }, a.name, forbiddenMessage(identity, a));
}
