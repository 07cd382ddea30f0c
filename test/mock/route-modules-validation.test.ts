import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RouteModuleName } from '../../src/api/schemas/modules/index.js';
import { startTestMock, type TestMock } from '../helpers/mock-api.js';
import { IDP_METADATA, validModuleBodies } from './edges-fixtures.js';

let m: TestMock;
let policyId: string;
beforeAll(async () => {
  m = await startTestMock();
  policyId = (await m.client.ipPolicies.create()).id;
});
afterAll(async () => {
  await m.close();
});

const gh = (github: Record<string, unknown>) => ({ provider: { github } });
const oidc = { issuer: 'https://idp.example.com', client_id: 'a', client_secret: 'b' };

/** [module, body, error code, field (relative to the module), words the message must contain]. */
type Case = [RouteModuleName, Record<string, unknown>, string, string];
const cases: Case[] = [
  ['backend', {}, 'ERR_122', '.backend_id'],
  ['backend', { backend_id: 'ipp_01hzzzzzzzzzzzzzzzzzzzzzzz' }, 'ERR_140', '.backend_id'],
  ['backend', { backend_id: 'bkdbg_01hzzzzzzzzzzzzzzzzzzzzzz1', enabled: 'yes' }, 'ERR_121', '.enabled'],
  ['ip_restriction', { ip_policy_ids: [] }, 'ERR_398', '.ip_policy_ids'],
  ['ip_restriction', { ip_policy_ids: ['ipp_01hzzzzzzzzzzzzzzzzzzzzzzz'] }, 'ERR_397', '.ip_policy_ids[0]'],
  ['ip_restriction', { ip_policy_ids: ['ep_01hzzzzzzzzzzzzzzzzzzzzzzz'] }, 'ERR_140', '.ip_policy_ids[0]'],
  ['ip_restriction', { ip_policy_ids: 'POLICY' }, 'ERR_121', '.ip_policy_ids'],
  ['circuit_breaker', { num_buckets: 0 }, 'ERR_352', '.num_buckets'],
  ['circuit_breaker', { num_buckets: 129 }, 'ERR_352', '.num_buckets'],
  ['circuit_breaker', { error_threshold_percentage: 1.01 }, 'ERR_353', '.error_threshold_percentage'],
  ['circuit_breaker', { error_threshold_percentage: 50 }, 'ERR_353', '.error_threshold_percentage'],
  ['circuit_breaker', { error_threshold_percentage: -0.1 }, 'ERR_353', '.error_threshold_percentage'],
  ['circuit_breaker', { tripped_duration: 0 }, 'ERR_354', '.tripped_duration'],
  ['circuit_breaker', { rolling_window: 0 }, 'ERR_354', '.rolling_window'],
  ['circuit_breaker', { volume_threshold: 4294967296 }, 'ERR_351', '.volume_threshold'],
  ['circuit_breaker', { volume_threshold: -1 }, 'ERR_351', '.volume_threshold'],
  ['circuit_breaker', { tripped_duration: 1.5 }, 'ERR_351', '.tripped_duration'],
  ['circuit_breaker', { buckets: 3 }, 'ERR_120', '.buckets'],
  ['compression', { enabled: true, level: 9 }, 'ERR_120', '.level'],
  ['websocket_tcp_converter', { enabled: 1 }, 'ERR_121', '.enabled'],
  ['request_headers', { add: { 'Bad Header': 'x' } }, 'ERR_390', '.add["Bad Header"]'],
  ['request_headers', { add: { 'X-A': 'a\r\nInjected: b' } }, 'ERR_391', '.add["X-A"]'],
  ['request_headers', { add: { 'X-A': '1', 'x-a': '2' } }, 'ERR_392', '.add["x-a"]'],
  ['request_headers', { add: { 'X-A': 1 } }, 'ERR_121', '.add.X-A'],
  ['response_headers', { remove: ['ok', 'not:ok'] }, 'ERR_390', '.remove[1]'],
  ['response_headers', { add: { 'X(A)': 'v' } }, 'ERR_390', '.add["X(A)"]'],
  ['webhook_verification', { provider: 'nope', secret: 's' }, 'ERR_370', '.provider'],
  ['webhook_verification', { secret: 's' }, 'ERR_122', '.provider'],
  ['webhook_verification', { provider: 'github' }, 'ERR_371', '.secret'],
  ['webhook_verification', { provider: 'stripe', secret: '' }, 'ERR_371', '.secret'],
  ['webhook_verification', { provider: 'sns', secret: 's' }, 'ERR_372', '.secret'],
  ['webhook_verification', { provider: 'SNS', secret: 's' }, 'ERR_372', '.secret'],
  ['oauth', {}, 'ERR_122', '.provider'],
  ['oauth', { provider: {} }, 'ERR_360', '.provider'],
  ['oauth', { provider: { github: {}, google: {} } }, 'ERR_360', '.provider'],
  ['oauth', { provider: { okta: {} } }, 'ERR_120', '.provider.okta'],
  ['oauth', gh({ client_id: 'id' }), 'ERR_361', '.provider.github.client_secret'],
  ['oauth', { provider: { google: { client_secret: 's' } } }, 'ERR_361', '.provider.google.client_id'],
  ['oauth', gh({ scopes: ['read:org'] }), 'ERR_362', '.provider.github.scopes'],
  ['oauth', gh({ teams: ['devs'] }), 'ERR_363', '.provider.github.teams[0]'],
  ['oauth', gh({ teams: ['acme/devs', 'acme/'] }), 'ERR_363', '.provider.github.teams[1]'],
  ['oauth', { provider: { google: { teams: ['acme/devs'] } } }, 'ERR_120', '.provider.google.teams'],
  [
    'oauth',
    { provider: { amazon: { organizations: ['acme'] } } },
    'ERR_120',
    '.provider.amazon.organizations',
  ],
  ['oauth', { provider: { twitch: {} }, inactivity_timeout: -5 }, 'ERR_351', '.inactivity_timeout'],
  ['oauth', { provider: { twitch: {} }, auth_check_interval: 4294967296 }, 'ERR_351', '.auth_check_interval'],
  ['saml', {}, 'ERR_122', '.idp_metadata'],
  ['saml', { idp_metadata: 'https://idp.example.com/metadata' }, 'ERR_381', '.idp_metadata'],
  ['saml', { idp_metadata: IDP_METADATA, nameid_format: 'urn:x:custom' }, 'ERR_382', '.nameid_format'],
  ['saml', { idp_metadata: IDP_METADATA, entity_id: 'https://sp' }, 'ERR_380', '.entity_id'],
  ['saml', { idp_metadata: IDP_METADATA, metadata_url: 'https://sp' }, 'ERR_380', '.metadata_url'],
  [
    'saml',
    { idp_metadata: IDP_METADATA, request_signing_certificate_pem: 'x' },
    'ERR_380',
    '.request_signing_certificate_pem',
  ],
  [
    'saml',
    { idp_metadata: IDP_METADATA, assertion_consumer_service_url: 'x' },
    'ERR_380',
    '.assertion_consumer_service_url',
  ],
  ['saml', { idp_metadata: IDP_METADATA, single_logout_url: 'x' }, 'ERR_380', '.single_logout_url'],
  ['saml', { idp_metadata: IDP_METADATA, maximum_duration: 1e10 }, 'ERR_351', '.maximum_duration'],
  ['oidc', { client_id: 'a', client_secret: 'b' }, 'ERR_122', '.issuer'],
  ['oidc', { ...oidc, issuer: 'not a url' }, 'ERR_385', '.issuer'],
  ['oidc', { ...oidc, issuer: 'ftp://idp.example.com' }, 'ERR_385', '.issuer'],
  ['oidc', { issuer: oidc.issuer, client_secret: 'b' }, 'ERR_122', '.client_id'],
  ['oidc', { issuer: oidc.issuer, client_id: 'a' }, 'ERR_122', '.client_secret'],
  ['oidc', { ...oidc, client_id: '' }, 'ERR_121', '.client_id'],
  ['user_agent_filter', { allow: ['(unclosed'] }, 'ERR_395', '.allow[0]'],
  ['user_agent_filter', { deny: ['ok', '[a-'] }, 'ERR_395', '.deny[1]'],
  ['traffic_policy', {}, 'ERR_122', '.value'],
  ['traffic_policy', { value: 'on_http_request: [unclosed' }, 'ERR_396', '.value'],
  ['traffic_policy', { value: '[1, 2]' }, 'ERR_396', '.value'],
  ['traffic_policy', { value: '- a\n- b\n' }, 'ERR_396', '.value'],
  ['traffic_policy', { value: '"just a string"' }, 'ERR_396', '.value'],
  ['traffic_policy', { value: '' }, 'ERR_396', '.value'],
];

async function newRouteWith(name: RouteModuleName) {
  const edge = await m.client.httpsEdges.create();
  const route = await m.client.httpsEdgeRoutes.create(edge.id, {
    match_type: 'path_prefix',
    match: '/',
    [name]: validModuleBodies(policyId)[name],
  });
  return { edge, route };
}

describe('route module rules: each violation is a 400 with its own code, and nothing is stored', () => {
  it.each(cases)('%s %j → %s on PUT', async (name, body, code, field) => {
    const { edge, route } = await newRouteWith(name);
    const res = await m.raw('PUT', `/edges/https/${edge.id}/routes/${route.id}/${name}`, { body });
    expect([res.status, res.json.error_code, res.json.details.field]).toEqual([400, code, `body${field}`]);
    // The message names the field (details.field has its full path).
    expect(res.json.msg).toContain(field.split('.').pop()!.replace(/\[.*$/, ''));
    expect(await m.client.httpsEdgeRoutes.get(edge.id, route.id)).toEqual(route);
  });

  it.each(cases)('%s %j → %s on route create and update', async (name, body, code, field) => {
    const { edge, route } = await newRouteWith(name);
    const created = await m.raw('POST', `/edges/https/${edge.id}/routes`, {
      body: { match_type: 'exact_path', match: '/new', [name]: body },
    });
    expect([created.status, created.json.error_code, created.json.details.field]).toEqual([
      400,
      code,
      `body.${name}${field}`,
    ]);
    const patched = await m.raw('PATCH', `/edges/https/${edge.id}/routes/${route.id}`, {
      body: { description: 'changed', [name]: body },
    });
    expect([patched.status, patched.json.error_code]).toEqual([400, code]);
    expect(await m.client.httpsEdges.get(edge.id)).toMatchObject({ routes: [route] });
  });
});

describe('route module rules: accepted edge cases', () => {
  it('matches webhook providers case-insensitively and lets sns go without a secret', async () => {
    const { edge, route } = await newRouteWith('compression');
    const api = m.client.httpsEdgeRoutes.modules.webhookVerification;
    expect(await api.replace(edge.id, route.id, { provider: 'SNS' })).toEqual({
      enabled: true,
      provider: 'sns',
    });
    expect(await api.replace(edge.id, route.id, { provider: 'Twilio', secret: 's' })).toEqual({
      enabled: true,
      provider: 'twilio',
      secret: 's',
    });
  });

  it('accepts the managed OAuth app (no client) and every provider', async () => {
    const { edge, route } = await newRouteWith('compression');
    const api = m.client.httpsEdgeRoutes.modules.oauth;
    for (const p of [
      'github',
      'facebook',
      'microsoft',
      'google',
      'linkedin',
      'gitlab',
      'twitch',
      'amazon',
    ] as const) {
      const put = await api.replace(edge.id, route.id, {
        provider: {
          [p]: { email_addresses: ['a@example.com'], client_id: 'i', client_secret: 's', scopes: ['x'] },
        },
      });
      expect(Object.keys(put.provider)).toEqual([p]);
    }
    const managed = await api.replace(edge.id, route.id, {
      provider: { google: { email_domains: ['example.com'] } },
    });
    expect(managed.provider.google).toEqual({ email_domains: ['example.com'] });
  });

  it('accepts circuit breaker bounds and a JSON traffic policy', async () => {
    const { edge, route } = await newRouteWith('compression');
    const cb = await m.client.httpsEdgeRoutes.modules.circuitBreaker.replace(edge.id, route.id, {
      num_buckets: 128,
      error_threshold_percentage: 1,
      volume_threshold: 4294967295,
      tripped_duration: 1,
      rolling_window: 4294967295,
    });
    expect(cb).toMatchObject({
      num_buckets: 128,
      error_threshold_percentage: 1,
      volume_threshold: 4294967295,
    });
    const zero = await m.client.httpsEdgeRoutes.modules.circuitBreaker.replace(edge.id, route.id, {
      num_buckets: 1,
      error_threshold_percentage: 0,
      volume_threshold: 0,
    });
    expect(zero).toMatchObject({ num_buckets: 1, error_threshold_percentage: 0, volume_threshold: 0 });
    const value = '{"on_http_request":[{"actions":[{"type":"deny"}]}]}';
    expect(
      await m.client.httpsEdgeRoutes.modules.trafficPolicy.replace(edge.id, route.id, { value }),
    ).toEqual({
      enabled: true,
      value,
    });
  });
});
