import type { z } from 'zod';
import { EndpointCircuitBreaker, EndpointCircuitBreakerInput } from './circuit-breaker.js';
import {
  EndpointMutualTLS,
  EndpointMutualTLSMutate,
  EndpointTLSTermination,
  EndpointTLSTerminationAtEdge,
} from './edge-tls.js';
import { EndpointHeaders, EndpointHeadersInput } from './headers.js';
import { EndpointOAuth, EndpointOAuthInput } from './oauth.js';
import { EndpointOIDC, EndpointOIDCInput } from './oidc.js';
import {
  EndpointBackend,
  EndpointBackendMutate,
  EndpointIPPolicy,
  EndpointIPPolicyMutate,
} from './references.js';
import { EndpointSAML, EndpointSAMLInput } from './saml.js';
import {
  EndpointCompression,
  EndpointCompressionInput,
  EndpointWebsocketTCPConverter,
  EndpointWebsocketTCPConverterInput,
} from './toggles.js';
import { EndpointTrafficPolicy, EndpointTrafficPolicyInput } from './traffic-policy.js';
import { EndpointUserAgentFilter, EndpointUserAgentFilterInput } from './user-agent-filter.js';
import { EndpointWebhookValidation, EndpointWebhookValidationInput } from './webhook.js';

export * from './circuit-breaker.js';
export * from './edge-tls.js';
export * from './headers.js';
export * from './oauth.js';
export * from './oidc.js';
export * from './references.js';
export * from './saml.js';
export * from './toggles.js';
export * from './traffic-policy.js';
export * from './user-agent-filter.js';
export * from './webhook.js';

/** A module's request ("mutate") and response forms. */
export interface ModuleForms<I extends z.ZodType = z.ZodType, O extends z.ZodType = z.ZodType> {
  input: I;
  output: O;
}

/** The 13 route modules by wire name (also their path segment under a route), in the spec's order. */
export const ROUTE_MODULES = {
  backend: { input: EndpointBackendMutate, output: EndpointBackend },
  ip_restriction: { input: EndpointIPPolicyMutate, output: EndpointIPPolicy },
  circuit_breaker: { input: EndpointCircuitBreakerInput, output: EndpointCircuitBreaker },
  compression: { input: EndpointCompressionInput, output: EndpointCompression },
  request_headers: { input: EndpointHeadersInput, output: EndpointHeaders },
  response_headers: { input: EndpointHeadersInput, output: EndpointHeaders },
  webhook_verification: { input: EndpointWebhookValidationInput, output: EndpointWebhookValidation },
  oauth: { input: EndpointOAuthInput, output: EndpointOAuth },
  saml: { input: EndpointSAMLInput, output: EndpointSAML },
  oidc: { input: EndpointOIDCInput, output: EndpointOIDC },
  websocket_tcp_converter: {
    input: EndpointWebsocketTCPConverterInput,
    output: EndpointWebsocketTCPConverter,
  },
  user_agent_filter: { input: EndpointUserAgentFilterInput, output: EndpointUserAgentFilter },
  traffic_policy: { input: EndpointTrafficPolicyInput, output: EndpointTrafficPolicy },
} as const satisfies Record<string, ModuleForms>;

export type RouteModuleName = keyof typeof ROUTE_MODULES;
export const ROUTE_MODULE_NAMES = Object.keys(ROUTE_MODULES) as RouteModuleName[];

/** The 2 edge modules by wire name. */
export const EDGE_MODULES = {
  mutual_tls: { input: EndpointMutualTLSMutate, output: EndpointMutualTLS },
  tls_termination: { input: EndpointTLSTerminationAtEdge, output: EndpointTLSTermination },
} as const satisfies Record<string, ModuleForms>;

export type EdgeModuleName = keyof typeof EDGE_MODULES;

export type RouteModuleInput<N extends RouteModuleName> = z.infer<(typeof ROUTE_MODULES)[N]['input']>;
export type RouteModuleOutput<N extends RouteModuleName> = z.infer<(typeof ROUTE_MODULES)[N]['output']>;
export type EdgeModuleInput<N extends EdgeModuleName> = z.infer<(typeof EDGE_MODULES)[N]['input']>;
export type EdgeModuleOutput<N extends EdgeModuleName> = z.infer<(typeof EDGE_MODULES)[N]['output']>;
