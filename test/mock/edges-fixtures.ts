import { expect } from 'vitest';
import { ApiError } from '../../src/api/client/index.js';
import type { RouteModuleInput, RouteModuleName } from '../../src/api/schemas/modules/index.js';

/** Ids of backends and certificate authorities both test accounts know. */
import { BACKEND_1, BACKEND_2, CA_1, CA_2 } from '../helpers/mock-api.js';

export { BACKEND_1, BACKEND_2, CA_1, CA_2 };

export const IDP_METADATA =
  '<?xml version="1.0"?>\n<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="https://idp.example.com/metadata"><md:IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol"/></md:EntityDescriptor>';

/** Awaits a call that must fail and checks the HTTP status and error code; answers the error. */
export async function expectApiError(
  call: Promise<unknown>,
  status: number,
  code?: string,
): Promise<ApiError> {
  const err = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, 'the call should have failed').toBeInstanceOf(ApiError);
  const apiError = err as ApiError;
  expect({ status: apiError.status, code: apiError.errorCode, msg: apiError.msg }).toMatchObject({
    status,
    ...(code ? { code } : {}),
  });
  return apiError;
}

/** A valid request body for every route module (ip_restriction needs a policy id of the account). */
export function validModuleBodies(ipPolicyId: string): { [N in RouteModuleName]: RouteModuleInput<N> } {
  return {
    backend: { backend_id: BACKEND_1 },
    ip_restriction: { ip_policy_ids: [ipPolicyId] },
    circuit_breaker: {
      tripped_duration: 20,
      rolling_window: 30,
      num_buckets: 8,
      volume_threshold: 5,
      error_threshold_percentage: 0.25,
    },
    compression: { enabled: true },
    request_headers: {
      add: { 'X-Custom-Header': 'Value With Case', 'x-lower': 'v' },
      remove: ['X-Remove-Me'],
    },
    response_headers: { add: { 'Strict-Transport-Security': 'max-age=60' }, remove: ['Server'] },
    webhook_verification: { provider: 'github', secret: 'whsec_123' },
    oauth: {
      provider: {
        github: {
          client_id: 'gh-client',
          client_secret: 'gh-secret',
          scopes: ['read:org'],
          teams: ['acme/devs'],
          organizations: ['acme'],
          email_domains: ['example.com'],
        },
      },
      options_passthrough: true,
      cookie_prefix: 'acme.',
      inactivity_timeout: 3600,
      maximum_duration: 86400,
      auth_check_interval: 600,
    },
    saml: { idp_metadata: IDP_METADATA, authorized_groups: ['admins'], force_authn: true },
    oidc: {
      issuer: 'https://accounts.example.com',
      client_id: 'oidc-client',
      client_secret: 'oidc-secret',
      scopes: ['openid', 'email'],
    },
    websocket_tcp_converter: {},
    user_agent_filter: { allow: ['^curl/.*'], deny: ['bot'] },
    traffic_policy: { value: 'on_http_request:\n  - actions:\n      - type: deny\n' },
  };
}
