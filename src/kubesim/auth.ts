import { errors, type ApiError } from './status.js';
import type { Verb } from './types.js';

/**
 * Bearer-token authentication and an RBAC-like authorizer. A token without rules is an admin;
 * otherwise a request is allowed when one rule matches verb, API group, resource, namespace and
 * (for requests on one named object) resource name, as RBAC PolicyRules do.
 */

export interface PolicyRule {
  verbs: (Verb | '*')[];
  /** Plural resource names (`services`, `leases`), or `*`. */
  resources: string[];
  /** API groups ('' is core); undefined means any group. */
  apiGroups?: string[];
  /** Namespaces the rule applies in; undefined (or `*`) means all, including cluster scope. */
  namespaces?: string[];
  /** Object names; requests without a name (list, watch, create) never match a named rule. */
  resourceNames?: string[];
}

export interface KubesimToken {
  token: string;
  user: string;
  /** undefined = admin (all rights). */
  rules?: PolicyRule[];
}

export interface RequestAttributes {
  verb: Verb;
  group: string;
  resource: string;
  namespace: string | undefined;
  name: string | undefined;
}

export class Authenticator {
  private readonly byToken = new Map<string, KubesimToken>();

  constructor(tokens: KubesimToken[]) {
    for (const t of tokens) this.byToken.set(t.token, t);
  }

  /** The token's identity for an `Authorization` header; undefined means 401. */
  authenticate(header: string | undefined): KubesimToken | undefined {
    const m = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
    return m?.[1] ? this.byToken.get(m[1]) : undefined;
  }
}

function ruleMatches(rule: PolicyRule, a: RequestAttributes): boolean {
  const any = (list: string[] | undefined, value: string) =>
    !list || list.includes('*') || list.includes(value);
  if (!rule.verbs.includes('*') && !rule.verbs.includes(a.verb)) return false;
  if (!rule.resources.includes('*') && !rule.resources.includes(a.resource)) return false;
  if (!any(rule.apiGroups, a.group)) return false;
  if (rule.namespaces && !rule.namespaces.includes('*')) {
    if (!a.namespace || !rule.namespaces.includes(a.namespace)) return false;
  }
  if (rule.resourceNames) {
    if (!a.name || !rule.resourceNames.includes(a.name)) return false;
  }
  return true;
}

export function authorize(token: KubesimToken, a: RequestAttributes): boolean {
  if (!token.rules) return true;
  return token.rules.some((r) => ruleMatches(r, a));
}

/** The RBAC denial exactly as the apiserver words it. */
export function forbidden(token: KubesimToken, a: RequestAttributes): ApiError {
  const scope = a.namespace ? `in the namespace "${a.namespace}"` : 'at the cluster scope';
  const why = `User "${token.user}" cannot ${a.verb} resource "${a.resource}" in API group "${a.group}" ${scope}`;
  return errors.forbidden({ group: a.group, plural: a.resource }, a.name, why);
}
