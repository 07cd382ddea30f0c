import type { HttpOutcome } from './decisions.js';

/**
 * What the controller decides before it registers: errors that waiting cannot heal stop it with
 * one line naming the setting and the fix (so Kubernetes shows CrashLoopBackOff with that line
 * last); errors that can heal are retried. Pure.
 */
export type PreflightVerdict =
  { kind: 'ok' } | { kind: 'fatal'; line: string } | { kind: 'retry'; reason: string };

export interface PreflightObservation {
  apiUrl: string;
  api: HttpOutcome<unknown>;
  server: string;
  cluster: HttpOutcome<unknown>;
  namespace: string;
  /** The operator namespace's GET: undefined when the cluster was not reachable. */
  namespaceAnswer: HttpOutcome<unknown> | undefined;
}

const healing = (status: number): boolean => status === 429 || status === 408 || status >= 500;

export function preflightVerdict(o: PreflightObservation): PreflightVerdict {
  const a = o.api;
  if (a.kind === 'tls')
    return {
      kind: 'fatal',
      line: `api.baseUrl ${o.apiUrl}: TLS verification failed (${a.message}); use the management API's https:// URL with a trusted certificate`,
    };
  if (a.kind === 'status' && (a.status === 401 || a.status === 403))
    return {
      kind: 'fatal',
      line: `ENDPOINT_BINDER_API_KEY: the management API refused the key (HTTP ${a.status}: ${a.message}); set a valid key of the account`,
    };
  if (a.kind === 'status' && !healing(a.status))
    return {
      kind: 'fatal',
      line: `api.baseUrl ${o.apiUrl}: answered HTTP ${a.status} (${a.message}); is it the management API's base URL?`,
    };
  const c = o.cluster;
  if (c.kind === 'tls')
    return {
      kind: 'fatal',
      line: `kubeconfig: TLS to ${o.server} failed (${c.message}); the kubeconfig's certificate-authority must match the server`,
    };
  if (c.kind === 'status' && (c.status === 401 || c.status === 403))
    return {
      kind: 'fatal',
      line: `kubeconfig: the Kubernetes API at ${o.server} refused the credentials (HTTP ${c.status}); check the service account token or --kubeconfig/--context`,
    };
  const n = o.namespaceAnswer;
  if (n?.kind === 'status' && n.status === 404)
    return {
      kind: 'fatal',
      line: `operatorNamespace: namespace ${o.namespace} does not exist; create it (kubectl create namespace ${o.namespace}) or set operatorNamespace / POD_NAMESPACE`,
    };
  const waiting: string[] = [];
  if (a.kind !== 'ok') waiting.push(`management API at ${o.apiUrl}: ${'message' in a ? a.message : ''}`);
  if (c.kind !== 'ok') waiting.push(`Kubernetes API at ${o.server}: ${'message' in c ? c.message : ''}`);
  else if (n && n.kind !== 'ok') waiting.push(`namespace ${o.namespace}: ${'message' in n ? n.message : ''}`);
  return waiting.length > 0 ? { kind: 'retry', reason: `waiting for ${waiting.join('; ')}` } : { kind: 'ok' };
}
