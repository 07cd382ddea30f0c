import type { RouteModuleName } from '../../../api/schemas/modules/index.js';
import {
  DEFAULT_MIN_TLS_VERSION,
  type EndpointMutualTLSMutate,
  type EndpointTLSTermination,
  type EndpointTLSTerminationAtEdge,
} from '../../../api/schemas/modules/edge-tls.js';
import { fieldError } from './field-error.js';
import { validateIdList } from './id-lists.js';

/**
 * Route modules that read or rewrite the HTTP traffic, so need TLS terminated at the edge. Only
 * `backend` and `ip_restriction` (source address) work on a passthrough (terminate_at upstream)
 * edge; the circuit breaker counts HTTP 5xx answers, so it needs the traffic too.
 */
export const MODULES_NEEDING_TRAFFIC: ReadonlySet<RouteModuleName> = new Set<RouteModuleName>([
  'circuit_breaker',
  'compression',
  'request_headers',
  'response_headers',
  'webhook_verification',
  'oauth',
  'saml',
  'oidc',
  'websocket_tcp_converter',
  'user_agent_filter',
  'traffic_policy',
]);

/** Applies defaults (enabled true, terminate_at edge, min_version 1.2 at the edge) and the null rule. */
export function normalizeTlsTermination(
  input: EndpointTLSTerminationAtEdge,
  field: string,
): EndpointTLSTermination {
  const terminateAt = input.terminate_at ?? 'edge';
  if (terminateAt === 'upstream') {
    if (input.min_version !== undefined && input.min_version !== null) {
      throw fieldError('ERR_312', `${field}.min_version`, 'must be null when terminate_at is "upstream"');
    }
    return { enabled: input.enabled ?? true, terminate_at: terminateAt, min_version: null };
  }
  return {
    enabled: input.enabled ?? true,
    terminate_at: terminateAt,
    min_version: input.min_version ?? DEFAULT_MIN_TLS_VERSION,
  };
}

export function validateMutualTls(input: EndpointMutualTLSMutate, field: string): void {
  validateIdList(input.certificate_authority_ids, `${field}.certificate_authority_ids`, {
    code: 'ERR_314',
    rule: 'must name at least one certificate authority',
  });
}

/** True when the edge passes TLS through to the upstream (a configured module counts, enabled or not). */
export function passesThrough(tls: EndpointTLSTermination | null): boolean {
  return tls?.terminate_at === 'upstream';
}

export interface PassthroughView {
  tls_termination: EndpointTLSTermination | null;
  hasMutualTls: boolean;
  routes: readonly { id: string; modules: Readonly<Partial<Record<RouteModuleName, unknown>>> }[];
}

/**
 * The one TLS rule across an edge: with terminate_at "upstream", no mutual TLS and no route module
 * that needs the traffic. Returns the first conflict's description, or undefined.
 */
export function passthroughConflict(edge: PassthroughView): string | undefined {
  if (!passesThrough(edge.tls_termination)) return undefined;
  if (edge.hasMutualTls) return 'mutual_tls needs TLS terminated at the edge';
  for (const route of edge.routes) {
    for (const name of MODULES_NEEDING_TRAFFIC) {
      const m = route.modules[name];
      if (m !== null && m !== undefined)
        return `module ${name} of route ${route.id} needs TLS terminated at the edge`;
    }
  }
  return undefined;
}
