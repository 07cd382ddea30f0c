import { AUTHENTICATED_GROUP, type Identity, type RequestAttributes } from './auth.js';
import { isDNS1123Label, isDNS1123Subdomain } from './validation/names.js';

/**
 * User impersonation (the apiserver's WithImpersonation filter), pure: which impersonation
 * requests the `Impersonate-*` headers make, the `impersonate` authorization each needs, and the
 * identity the request then runs as.
 */

export type ImpersonationHeaders = Record<string, string[] | undefined>;

interface ImpersonationRequest {
  /** The ObjectReference kind the real filter builds: what %v of it prints in the 500. */
  kind: 'ServiceAccount' | 'User' | 'Group' | 'UserExtra' | 'UID';
  name: string;
  namespace?: string;
  /** UserExtra: the extra key. */
  key?: string;
}

export interface ImpersonationPlan {
  /** One `impersonate` check per request, in the filter's order. */
  checks: RequestAttributes[];
  /** The identity the request runs as once every check passed. */
  identity: Identity;
}

export type ImpersonationResult =
  | { kind: 'none' }
  | { kind: 'plan'; plan: ImpersonationPlan }
  /** The filter's plain-text 500 (a group, extra or uid without a user). */
  | { kind: 'error'; message: string };

const SA_PREFIX = 'system:serviceaccount:';

/** serviceaccount.SplitUsername: namespace and name of a ServiceAccount username, if it is one. */
export function splitServiceAccountUser(user: string): { namespace: string; name: string } | undefined {
  if (!user.startsWith(SA_PREFIX)) return undefined;
  const parts = user.slice(SA_PREFIX.length).split(':');
  if (parts.length !== 2) return undefined;
  const [namespace = '', name = ''] = parts;
  if (isDNS1123Label(namespace).length || isDNS1123Subdomain(name).length) return undefined;
  return { namespace, name };
}

/** The groups every ServiceAccount is in (serviceaccount.MakeGroupNames). */
export function serviceAccountGroups(namespace: string): string[] {
  return ['system:serviceaccounts', `system:serviceaccounts:${namespace}`];
}

function one(headers: ImpersonationHeaders, name: string): string {
  return headers[name]?.[0] ?? '';
}

/** %v of a v1.ObjectReference, as the filter's error prints the requests. */
function goReference(r: ImpersonationRequest): string {
  const apiVersion = r.kind === 'UserExtra' || r.kind === 'UID' ? 'authentication.k8s.io/v1' : '';
  return `{${[r.kind, r.namespace ?? '', r.name, '', apiVersion, '', r.key ?? ''].join(' ')}}`;
}

function requestsOf(headers: ImpersonationHeaders): ImpersonationRequest[] {
  const out: ImpersonationRequest[] = [];
  const user = one(headers, 'impersonate-user');
  if (user) {
    const sa = splitServiceAccountUser(user);
    out.push(sa ? { kind: 'ServiceAccount', ...sa } : { kind: 'User', name: user });
  }
  for (const g of headers['impersonate-group'] ?? []) out.push({ kind: 'Group', name: g });
  for (const [header, values] of Object.entries(headers)) {
    if (!header.startsWith('impersonate-extra-')) continue;
    let key = header.slice('impersonate-extra-'.length);
    try {
      key = decodeURIComponent(key);
    } catch {
      // An undecodable key is used as sent, as url.PathUnescape's failure leaves it.
    }
    for (const v of values ?? []) out.push({ kind: 'UserExtra', name: v, key });
  }
  const uid = one(headers, 'impersonate-uid');
  if (uid) out.push({ kind: 'UID', name: uid });
  return out;
}

function checkFor(r: ImpersonationRequest): RequestAttributes {
  const base = { verb: 'impersonate', namespace: r.namespace, name: r.name };
  switch (r.kind) {
    case 'ServiceAccount':
      return { ...base, group: '', resource: 'serviceaccounts' };
    case 'User':
      return { ...base, group: '', resource: 'users' };
    case 'Group':
      return { ...base, group: '', resource: 'groups' };
    case 'UserExtra':
      return { ...base, group: 'authentication.k8s.io', resource: 'userextras', subresource: r.key ?? '' };
    case 'UID':
      return { ...base, group: 'authentication.k8s.io', resource: 'uids' };
  }
}

/** What the `Impersonate-*` headers ask for; `none` when there are none. */
export function planImpersonation(headers: ImpersonationHeaders, requestor: Identity): ImpersonationResult {
  const requests = requestsOf(headers);
  if (requests.length === 0) return { kind: 'none' };
  if (!requests.some((r) => r.kind === 'User' || r.kind === 'ServiceAccount')) {
    return {
      kind: 'error',
      message: `requested [${requests.map(goReference).join(' ')}] without impersonating a user`,
    };
  }
  // Groups given in headers are the whole truth (system:authenticated included or not).
  const groupsSpecified = (headers['impersonate-group'] ?? []).length > 0;
  let user = '';
  let uid: string | undefined;
  let groups: string[] = [];
  const extra: Record<string, string[]> = {};
  for (const r of requests) {
    if (r.kind === 'ServiceAccount') {
      user = `${SA_PREFIX}${r.namespace ?? ''}:${r.name}`;
      if (!groupsSpecified) groups = serviceAccountGroups(r.namespace ?? '');
    } else if (r.kind === 'User') user = r.name;
    else if (r.kind === 'Group') groups.push(r.name);
    else if (r.kind === 'UserExtra') (extra[r.key ?? ''] ??= []).push(r.name);
    else uid = r.name;
  }
  if (user !== 'system:anonymous') {
    if (!groups.some((g) => g === AUTHENTICATED_GROUP || g === 'system:unauthenticated'))
      groups.push(AUTHENTICATED_GROUP);
  } else if (!groups.includes('system:unauthenticated')) {
    groups.push('system:unauthenticated');
  }
  return {
    kind: 'plan',
    plan: {
      checks: requests.map(checkFor),
      identity: {
        user,
        groups,
        ...(uid !== undefined ? { uid } : {}),
        ...(Object.keys(extra).length ? { extra } : {}),
        source: { kind: 'rbac' },
        impersonator: { user: requestor.user, groups: requestor.groups },
      },
    },
  };
}
