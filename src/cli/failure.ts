import { ApiError, ApiResponseError } from '../api/client/index.js';
import { PLAIN_HTTP_SERVER, classifyThrown } from '../check/decisions.js';
import { toKubeApiError } from '../kube/errors.js';

/**
 * Turns an error a user can cause (a refused key, an unreachable or wrong URL, a TLS failure, a
 * Kubernetes API refusal) into one line naming the cause and the fix; undefined for anything
 * else (a bug, reported without a stack by main.ts). Pure.
 */
export function describeFailure(err: unknown): string | undefined {
  if (err instanceof ApiError) {
    if (err.status === 401 || err.status === 403)
      return `the management API refused the key (HTTP ${err.status}: ${err.msg}); set ENDPOINT_BINDER_API_KEY to a valid key of the account`;
    return `the management API answered ${err.message}`;
  }
  if (err instanceof ApiResponseError)
    return `${err.message}; is the URL (--api-url / api.baseUrl) the management API?`;
  const kube = toKubeApiError(err);
  if (kube) {
    if (kube.code === 401)
      return `the Kubernetes API refused the credentials (HTTP 401); check --kubeconfig / --context`;
    if (kube.code === 403)
      return `the Kubernetes API forbids this (HTTP 403: ${kube.message}); the identity needs the chart's RBAC`;
    if (kube.code === 404)
      return `not found in the cluster (HTTP 404: ${kube.message}); does the operator namespace exist (--operator-namespace / POD_NAMESPACE)?`;
    return `the Kubernetes API answered HTTP ${kube.code}: ${kube.message}`;
  }
  const c = classifyThrown(err);
  if (c.kind === 'tls' && c.message === PLAIN_HTTP_SERVER) return `${PLAIN_HTTP_SERVER} in the URL`;
  if (c.kind === 'network' && /EADDRINUSE/.test(c.message))
    return `cannot listen (${c.message}): another process uses that address; stop it or choose another port (--port)`;
  if (c.kind === 'tls')
    return `TLS failed (${c.message}); the URL must name a host whose certificate this machine trusts`;
  if (c.kind === 'network')
    return `cannot connect (${c.message}); check the URL and that this host can reach it`;
  return undefined;
}
