import type { KubernetesOperator } from '../api/schemas/operator.js';
import { registrationDrift, type RegistrationSpec } from '../controller/registration.js';
import { fail, pass, skipped, type CheckResult } from './result.js';

/**
 * What `endpoint-binder check` concludes from what its probes saw. Pure: every function takes
 * an observation (an answer, an error already classified, a clock reading) and returns lines.
 */

/** How a request to an HTTP API ended, classified by the probe. */
export type HttpOutcome<T> =
  | { kind: 'ok'; value: T }
  | { kind: 'network'; message: string }
  | { kind: 'tls'; message: string }
  | { kind: 'status'; status: number; message: string }
  | { kind: 'other'; message: string };

const TLS_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_GET_ISSUER_CERT',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'ERR_SSL_WRONG_VERSION_NUMBER',
  'EPROTO',
]);

function codes(err: unknown): string[] {
  const out: string[] = [];
  let e: unknown = err;
  for (let i = 0; i < 4 && typeof e === 'object' && e !== null; i++) {
    const c = (e as { code?: unknown }).code;
    if (typeof c === 'string') out.push(c);
    e = (e as { cause?: unknown }).cause;
  }
  return out;
}

function messageOf(err: unknown): string {
  const parts: string[] = [];
  let e: unknown = err;
  for (let i = 0; i < 4 && e instanceof Error; i++) {
    if (!parts.includes(e.message)) parts.push(e.message);
    e = e.cause;
  }
  return parts.join(': ') || String(err);
}

/** Classifies a thrown error (status errors are classified by the caller, which knows its client). */
/**
 * A TLS handshake answered by a plain-HTTP server: OpenSSL's "wrong version number" (its record
 * header is `HTTP/1.1 400`). The fix is the URL's scheme, not a certificate.
 */
export const PLAIN_HTTP_SERVER =
  'the server answered plain HTTP to a TLS handshake (an https:// URL for an http:// server); use http://';

export function classifyThrown(err: unknown): Exclude<HttpOutcome<never>, { kind: 'ok' | 'status' }> {
  const cs = codes(err);
  // One line: OpenSSL's messages span several (library, function, reason).
  const message = messageOf(err).replace(/\s+/g, ' ').trim();
  if (
    cs.includes('ERR_SSL_WRONG_VERSION_NUMBER') ||
    /wrong version number|packet length too long|http request/i.test(message)
  )
    return { kind: 'tls', message: PLAIN_HTTP_SERVER };
  if (cs.some((c) => TLS_CODES.has(c) || c.startsWith('ERR_TLS') || c.startsWith('ERR_SSL')))
    return { kind: 'tls', message };
  if (
    cs.some((c) => /^(E[A-Z]+|UND_ERR_[A-Z_]+)$/.test(c)) ||
    (err instanceof Error && (err.name === 'TimeoutError' || err.name === 'ApiTimeoutError'))
  )
    return { kind: 'network', message };
  return { kind: 'other', message };
}

/** The management API's lines: reachable, TLS verified (https only), key accepted, registration. */
export function apiChecks(
  baseUrl: string,
  outcome: HttpOutcome<KubernetesOperator[]>,
  spec: RegistrationSpec,
): CheckResult[] {
  const https = baseUrl.startsWith('https:');
  const reach = `management API reachable at ${baseUrl}`;
  const tls = 'management API TLS certificate verified';
  const key = 'API key accepted (ENDPOINT_BINDER_API_KEY)';
  const reg = `operator record of ${spec.name} in ${spec.namespace} present and matching the config`;
  const rest = (because: string, from: number): CheckResult[] =>
    [
      ...(https ? [{ id: 'api.tls', title: tls }] : []),
      { id: 'api.key', title: key },
      { id: 'api.registration', title: reg },
    ]
      .slice(from)
      .map((c) => skipped(c.id, c.title, because));
  switch (outcome.kind) {
    case 'network':
    case 'other':
      return [
        fail(
          'api.reachable',
          reach,
          `${outcome.message}; check api.baseUrl (--api-url) and that this host can reach it`,
        ),
        ...rest('the API is not reachable', 0),
      ];
    case 'tls':
      return [
        pass('api.reachable', reach),
        fail(
          'api.tls',
          tls,
          outcome.message === PLAIN_HTTP_SERVER
            ? `${PLAIN_HTTP_SERVER} in api.baseUrl (--api-url)`
            : `${outcome.message}; api.baseUrl must name a host whose certificate this machine trusts (http:// against an https server fails here too)`,
        ),
        ...rest('TLS to the API failed', https ? 1 : 0),
      ];
    case 'status': {
      const head = [pass('api.reachable', reach), ...(https ? [pass('api.tls', tls)] : [])];
      if (outcome.status === 401 || outcome.status === 403) {
        return [
          ...head,
          fail(
            'api.key',
            key,
            `the API answered ${outcome.status} (${outcome.message}); set ENDPOINT_BINDER_API_KEY to a valid key of the account`,
          ),
          skipped('api.registration', reg, 'the key was refused'),
        ];
      }
      return [
        ...head,
        fail(
          'api.key',
          key,
          `the API answered ${outcome.status} (${outcome.message}); is api.baseUrl the management API?`,
        ),
        skipped('api.registration', reg, 'the API did not answer the operator list'),
      ];
    }
    case 'ok': {
      const head = [
        pass('api.reachable', reach),
        ...(https ? [pass('api.tls', tls)] : []),
        pass('api.key', key),
      ];
      const mine = outcome.value
        .filter((op) => op.deployment.name === spec.name && op.deployment.namespace === spec.namespace)
        .sort((a, b) => Date.parse(a.created_at) - Date.parse(b.created_at) || (a.id < b.id ? -1 : 1));
      const op = mine[0];
      if (!op) {
        return [
          ...head,
          fail(
            'api.registration',
            reg,
            'no operator record for this install yet; the controller creates it once it runs and reaches the cluster',
          ),
        ];
      }
      const drift = registrationDrift(op, spec);
      const fields = drift ? registrationFields(drift) : [];
      if (fields.length > 0) {
        return [
          ...head,
          fail(
            'api.registration',
            reg,
            `operator record ${op.id} differs from the config (${fields.join(', ')}); the running controller puts it back on its next resync`,
          ),
        ];
      }
      return [...head, pass('api.registration', `${reg} (${op.id})`)];
    }
  }
}

/** The config fields a registration PATCH would change, in the install's words. */
export function registrationFields(patch: Record<string, unknown>): string[] {
  const names: Record<string, string> = {
    description: 'registration.description',
    metadata: 'registration.metadata',
    enabled_features: 'bindings.enabled (features)',
    binding: 'bindings.endpointSelector',
    deployment: 'version',
  };
  return Object.keys(patch).map((k) => names[k] ?? k);
}

/** The Kubernetes API's line. */
export function clusterCheck(server: string, outcome: HttpOutcome<unknown>): CheckResult {
  const title = `Kubernetes API reachable at ${server}`;
  switch (outcome.kind) {
    case 'ok':
      return pass('cluster.reachable', title);
    case 'tls':
      return fail(
        'cluster.reachable',
        title,
        `TLS failed (${outcome.message}); the kubeconfig's certificate-authority must match the server`,
      );
    case 'status':
      return fail(
        'cluster.reachable',
        title,
        outcome.status === 401
          ? 'the Kubernetes API answered 401: the kubeconfig credentials (token, client certificate) are not accepted'
          : `the Kubernetes API answered ${outcome.status}: ${outcome.message}`,
      );
    default:
      return fail(
        'cluster.reachable',
        title,
        `${outcome.message}; check --kubeconfig / --context (or the in-cluster service account)`,
      );
  }
}

/** One permission the controller needs, as a SelfSubjectAccessReview's resourceAttributes. */
export interface Permission {
  group: string;
  resource: string;
  verbs: readonly string[];
  /** undefined: every namespace (cluster-wide). */
  namespace?: string;
  name?: string;
  why: string;
}

/** Every permission the controller uses (the chart's ClusterRole and leader-election Role). */
export function controllerPermissions(operatorNamespace: string, leaseName: string): Permission[] {
  return [
    {
      group: '',
      resource: 'services',
      verbs: ['get', 'list', 'watch', 'create', 'update', 'delete'],
      why: 'internal and alias Services',
    },
    { group: '', resource: 'namespaces', verbs: ['get', 'list', 'watch'], why: 'alias namespaces' },
    { group: '', resource: 'events', verbs: ['create', 'patch'], why: 'events about endpoints' },
    {
      group: 'coordination.k8s.io',
      resource: 'leases',
      verbs: ['get', 'update'],
      namespace: operatorNamespace,
      name: leaseName,
      why: 'leader election',
    },
    {
      group: 'coordination.k8s.io',
      resource: 'leases',
      verbs: ['create'],
      namespace: operatorNamespace,
      why: 'leader election (first start)',
    },
  ];
}

/** The line names whose rights it reviewed (the controller's account, never the caller's). */
function permissionTitle(p: Permission, who: string): string {
  const what = `${p.resource}${p.group ? `.${p.group}` : ''}${p.name ? ` "${p.name}"` : ''}`;
  const where = p.namespace ? `in namespace ${p.namespace}` : 'in every namespace';
  return `${who} may ${p.verbs.join(', ')} ${what} ${where} (${p.why})`;
}

export function permissionId(p: Permission): string {
  return `cluster.rbac.${p.resource}${p.group ? `.${p.group}` : ''}.${p.verbs.join('-')}`;
}

/** One line per permission: `denied` holds the verbs the review refused (or the review's error). */
export function permissionCheck(
  p: Permission,
  answer: { denied: string[] } | { error: string },
  who: string,
): CheckResult {
  const title = permissionTitle(p, who);
  if ('error' in answer)
    return fail(permissionId(p), title, `SelfSubjectAccessReview failed: ${answer.error}`);
  if (answer.denied.length === 0) return pass(permissionId(p), title);
  return fail(
    permissionId(p),
    title,
    `${who} may not ${answer.denied.join(', ')} ${p.resource}; restore the chart's RBAC (its ClusterRole/Role and their bindings to this account: helm upgrade --reuse-values, or kubectl auth can-i --list --as ${who} to see what it holds)`,
  );
}

/** The operator namespace's line. */
export function namespaceCheck(
  ns: string,
  seen: { phase: 'Active' | 'Terminating' | 'absent' } | { error: string },
): CheckResult {
  const title = `operator namespace "${ns}" exists`;
  if ('error' in seen) return fail('cluster.namespace', title, `cannot read it: ${seen.error}`);
  if (seen.phase === 'Active') return pass('cluster.namespace', title);
  if (seen.phase === 'Terminating')
    return fail(
      'cluster.namespace',
      title,
      `namespace ${ns} is being deleted; the controller cannot lead there`,
    );
  return fail(
    'cluster.namespace',
    title,
    `namespace ${ns} does not exist: create it (kubectl create namespace ${ns}) or set operatorNamespace`,
  );
}

export interface LeaseView {
  holder: string;
  renewTime: string | undefined;
  leaseDurationSeconds: number;
}

/** The Lease's line: held by someone and renewed within its duration, as of `nowMs` (wall clock). */
export function leaseCheck(
  ns: string,
  name: string,
  seen: { lease: LeaseView | undefined } | { error: string },
  nowMs: number,
): CheckResult {
  const title = `Lease ${ns}/${name} held and renewed recently`;
  if ('error' in seen) return fail('cluster.lease', title, `cannot read it: ${seen.error}`);
  const l = seen.lease;
  if (!l)
    return fail(
      'cluster.lease',
      title,
      'no Lease: no controller replica has ever led; is the controller running?',
    );
  if (!l.holder)
    return fail(
      'cluster.lease',
      title,
      'the Lease is released and nobody holds it; is the controller running?',
    );
  const renewed = l.renewTime ? Date.parse(l.renewTime) : NaN;
  if (Number.isNaN(renewed))
    return fail('cluster.lease', title, `held by ${l.holder} but never renewed; is the controller running?`);
  const ageS = Math.max(0, Math.round((nowMs - renewed) / 1000));
  if (nowMs - renewed > l.leaseDurationSeconds * 1000) {
    return fail(
      'cluster.lease',
      title,
      `held by ${l.holder}, last renewed ${ageS}s ago (duration ${l.leaseDurationSeconds}s): that replica is gone or stuck; check its logs`,
    );
  }
  return pass('cluster.lease', `${title} (by ${l.holder}, ${ageS}s ago)`);
}

export interface PodView {
  name: string;
  ready: boolean;
  /** The Ready condition's message or the waiting container's reason. */
  why?: string;
}

/** The forwarders' line: at least one pod, every one Ready (its readiness means every port is bound). */
export function forwardersCheck(
  ns: string,
  selector: string,
  seen: { pods: PodView[] } | { error: string },
): CheckResult {
  const title = 'forwarder pods ready with every port bound';
  if ('error' in seen) return fail('forwarders.ready', title, `cannot list pods: ${seen.error}`);
  if (seen.pods.length === 0)
    return fail(
      'forwarders.ready',
      title,
      `no pods match ${selector} in ${ns}; is the forwarder Deployment scaled to 0?`,
    );
  const notReady = seen.pods.filter((p) => !p.ready);
  if (notReady.length > 0) {
    return fail(
      'forwarders.ready',
      title,
      `${notReady.length} of ${seen.pods.length} not ready: ${notReady.map((p) => `${p.name}${p.why ? ` (${p.why})` : ''}`).join(', ')}; kubectl -n ${ns} describe pod ${notReady[0]!.name}`,
    );
  }
  return pass('forwarders.ready', `${title} (${seen.pods.length})`);
}

/** A right the controller's service account must not hold: the chart never grants it. */
export interface ForbiddenRight {
  group: string;
  resource: string;
  subresource?: string;
  verbs: readonly string[];
  /** Also asked in the operator namespace (a Role there); cluster-wide is always asked. */
  namespaced: boolean;
  why: string;
}

/**
 * What RBAC can express of the fence's forbidden list (the fence itself judges Service types and
 * labels, which no RBAC rule can): rights beyond the chart's rules that would let a stolen
 * controller token read secrets, act as someone else, grant itself more, or switch the fence off.
 */
export function forbiddenRights(bindingsEnabled: boolean): ForbiddenRight[] {
  const rights: ForbiddenRight[] = [
    {
      group: '',
      resource: 'secrets',
      verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
      namespaced: true,
      why: 'the controller reads no Secret',
    },
    {
      group: '',
      resource: 'services',
      verbs: bindingsEnabled
        ? ['patch', 'deletecollection']
        : ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'deletecollection'],
      namespaced: false,
      why: bindingsEnabled
        ? 'Services are replaced, never patched, and deleted one by one'
        : 'bindings.enabled is false: the controller needs no Service rights',
    },
    {
      group: '',
      resource: 'pods',
      subresource: 'exec',
      verbs: ['create'],
      namespaced: true,
      why: 'the controller runs nothing in pods',
    },
    ...['users', 'groups', 'serviceaccounts'].map((resource): ForbiddenRight => ({
      group: '',
      resource,
      verbs: ['impersonate'],
      namespaced: false,
      why: 'the controller acts only as itself',
    })),
    ...['clusterroles', 'roles'].map((resource): ForbiddenRight => ({
      group: 'rbac.authorization.k8s.io',
      resource,
      verbs: ['escalate', 'bind'],
      namespaced: false,
      why: 'the controller grants no rights',
    })),
    ...['validatingadmissionpolicies', 'validatingadmissionpolicybindings'].map(
      (resource): ForbiddenRight => ({
        group: 'admissionregistration.k8s.io',
        resource,
        verbs: ['update', 'patch', 'delete'],
        namespaced: false,
        why: 'the fence must not be switched off by the account it fences',
      }),
    ),
  ];
  return rights;
}

/** One right found held, as `kubectl auth can-i` would name it. */
export interface HeldRight {
  verb: string;
  right: ForbiddenRight;
  /** undefined: in every namespace. */
  namespace?: string;
}

function rightName(h: HeldRight): string {
  const res = `${h.right.resource}${h.right.subresource ? `/${h.right.subresource}` : ''}${h.right.group ? `.${h.right.group}` : ''}`;
  return `${h.verb} ${res}${h.namespace ? ` in ${h.namespace}` : ''}`;
}

export const EXCESS_RIGHTS_ID = 'cluster.excess-rights';

/**
 * The line about rights beyond the chart's: `held` lists every forbidden right a review allowed.
 * `who` is the service account judged; `how` says whether it was asked directly or impersonated.
 */
export function excessRightsCheck(
  who: string,
  seen: { held: HeldRight[] } | { error: string } | { skip: string },
): CheckResult {
  const title = `${who} holds no rights beyond the chart's (no secrets, impersonate, escalate/bind, pods/exec, Service patch, fence policy writes)`;
  if ('skip' in seen) return skipped(EXCESS_RIGHTS_ID, title, seen.skip);
  if ('error' in seen) return fail(EXCESS_RIGHTS_ID, title, `SelfSubjectAccessReview failed: ${seen.error}`);
  if (seen.held.length === 0) return pass(EXCESS_RIGHTS_ID, title);
  const whys = [...new Set(seen.held.map((h) => h.right.why))];
  return fail(
    EXCESS_RIGHTS_ID,
    title,
    `it may also ${seen.held.map(rightName).join(', ')} (${whys.join('; ')}); remove the extra (Cluster)RoleBinding: kubectl auth can-i --list --as ${who}`,
  );
}
