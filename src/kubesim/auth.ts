import { errors, type ApiError } from './status.js';
import type { Verb } from './types.js';

/**
 * Bearer-token authentication and authorization. Static tokens (the `tokens` option) carry their
 * own rules (none = admin); ServiceAccount tokens are authorized from the stored RBAC objects
 * (rbac.ts). A request is allowed when one rule matches verb, API group, resource (with
 * subresource), namespace and (for requests on one named object) resource name, as RBAC
 * PolicyRules do.
 */

export interface PolicyRule {
  verbs: (Verb | '*')[];
  /** Plural resource names (`services`, `leases`), `resource/subresource`, `*` or `*\/subresource`. */
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

/** Who a request is from (user.Info), and where its rights come from. */
export interface Identity {
  user: string;
  groups: string[];
  /** `static`: the token's own rules (undefined = admin); `rbac`: the stored RBAC objects. */
  source: { kind: 'static'; rules?: PolicyRule[] } | { kind: 'rbac' };
}

export interface RequestAttributes {
  verb: Verb;
  group: string;
  resource: string;
  subresource?: string;
  namespace: string | undefined;
  name: string | undefined;
}

/** Looks up tokens that are not static (ServiceAccount tokens). */
export type TokenLookup = (token: string) => Identity | undefined;

export class Authenticator {
  private readonly byToken = new Map<string, Identity>();

  constructor(
    tokens: KubesimToken[],
    private readonly dynamic: TokenLookup = () => undefined,
  ) {
    for (const t of tokens) {
      this.byToken.set(t.token, {
        user: t.user,
        groups: ['system:authenticated'],
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

export function ruleMatches(rule: PolicyRule, a: RequestAttributes): boolean {
  const any = (list: string[] | undefined, value: string) =>
    !list || list.includes('*') || list.includes(value);
  if (!rule.verbs.includes('*') && !rule.verbs.includes(a.verb)) return false;
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

export function allowedByRules(rules: readonly PolicyRule[], a: RequestAttributes): boolean {
  return rules.some((r) => ruleMatches(r, a));
}

/** The RBAC denial exactly as the apiserver words it. */
export function forbidden(identity: Pick<Identity, 'user'>, a: RequestAttributes): ApiError {
  const scope = a.namespace ? `in the namespace "${a.namespace}"` : 'at the cluster scope';
  const resource = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  const why = `User "${identity.user}" cannot ${a.verb} resource "${resource}" in API group "${a.group}" ${scope}`;
  return errors.forbidden({ group: a.group, plural: a.resource }, a.name, why);
}
