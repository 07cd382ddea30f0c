import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RouteModuleName } from '../../src/api/schemas/modules/index.js';
import { startTestMock, type TestMock } from '../helpers/mock-api.js';
import { CA_1, expectApiError, validModuleBodies } from './edges-fixtures.js';

let m: TestMock;
let policyId: string;
beforeAll(async () => {
  m = await startTestMock();
  policyId = (await m.client.ipPolicies.create()).id;
});
afterAll(async () => {
  await m.close();
});

const NEEDS_TRAFFIC: RouteModuleName[] = [
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
];

async function upstreamEdgeWithRoute() {
  const edge = await m.client.httpsEdges.create({ tls_termination: { terminate_at: 'upstream' } });
  const route = await m.client.httpsEdgeRoutes.create(edge.id, { match_type: 'path_prefix', match: '/' });
  return { edge: await m.client.httpsEdges.get(edge.id), route };
}

describe('TLS passthrough (terminate_at "upstream")', () => {
  it('allows backend and ip_restriction on a passthrough edge', async () => {
    const { edge, route } = await upstreamEdgeWithRoute();
    const body = validModuleBodies(policyId);
    await m.client.httpsEdgeRoutes.modules.backend.replace(edge.id, route.id, body.backend);
    await m.client.httpsEdgeRoutes.modules.ipRestriction.replace(edge.id, route.id, body.ip_restriction);
    const r = await m.client.httpsEdgeRoutes.create(edge.id, {
      match_type: 'exact_path',
      match: '/b',
      backend: body.backend,
      ip_restriction: body.ip_restriction,
    });
    expect(r.backend?.enabled).toBe(true);
  });

  it.each(NEEDS_TRAFFIC)(
    'refuses %s on a route of a passthrough edge (PUT, create, update)',
    async (name) => {
      const { edge, route } = await upstreamEdgeWithRoute();
      const body = validModuleBodies(policyId)[name];
      const put = await m.raw('PUT', `/edges/https/${edge.id}/routes/${route.id}/${name}`, { body });
      expect([put.status, put.json.error_code]).toEqual([400, 'ERR_313']);
      expect(put.json.msg).toContain('upstream');
      const created = await m.raw('POST', `/edges/https/${edge.id}/routes`, {
        body: { match_type: 'exact_path', match: '/x', [name]: body },
      });
      expect([created.status, created.json.error_code, created.json.details.field]).toEqual([
        400,
        'ERR_313',
        `body.${name}`,
      ]);
      const patched = await m.raw('PATCH', `/edges/https/${edge.id}/routes/${route.id}`, {
        body: { [name]: body },
      });
      expect([patched.status, patched.json.error_code]).toEqual([400, 'ERR_313']);
      expect(await m.client.httpsEdges.get(edge.id)).toEqual(edge);
    },
  );

  it.each(NEEDS_TRAFFIC)('refuses switching to upstream while a route uses %s', async (name) => {
    const edge = await m.client.httpsEdges.create({ tls_termination: {} });
    const route = await m.client.httpsEdgeRoutes.create(edge.id, {
      match_type: 'path_prefix',
      match: '/',
      [name]: validModuleBodies(policyId)[name],
    });
    const before = await m.client.httpsEdges.get(edge.id);
    const err = await expectApiError(
      m.client.httpsEdges.update(edge.id, { tls_termination: { terminate_at: 'upstream' } }),
      400,
      'ERR_313',
    );
    expect(err.msg).toContain(name);
    expect(err.msg).toContain(route.id);
    await expectApiError(
      m.client.httpsEdges.tlsTermination.replace(edge.id, { terminate_at: 'upstream' }),
      400,
      'ERR_313',
    );
    expect(await m.client.httpsEdges.get(edge.id)).toEqual(before);
  });

  it('counts a disabled module too', async () => {
    const edge = await m.client.httpsEdges.create();
    await m.client.httpsEdgeRoutes.create(edge.id, {
      match_type: 'path_prefix',
      match: '/',
      compression: { enabled: false },
    });
    await expectApiError(
      m.client.httpsEdges.tlsTermination.replace(edge.id, { terminate_at: 'upstream' }),
      400,
      'ERR_313',
    );
  });

  it('refuses mutual TLS together with passthrough, in either order', async () => {
    const up = await m.client.httpsEdges.create({ tls_termination: { terminate_at: 'upstream' } });
    await expectApiError(
      m.client.httpsEdges.mutualTls.replace(up.id, { certificate_authority_ids: [CA_1] }),
      400,
      'ERR_313',
    );
    await expectApiError(
      m.client.httpsEdges.update(up.id, { mutual_tls: { certificate_authority_ids: [CA_1] } }),
      400,
      'ERR_313',
    );
    expect(await m.client.httpsEdges.get(up.id)).toEqual(up);

    const mtls = await m.client.httpsEdges.create({ mutual_tls: { certificate_authority_ids: [CA_1] } });
    await expectApiError(
      m.client.httpsEdges.tlsTermination.replace(mtls.id, { terminate_at: 'upstream' }),
      400,
      'ERR_313',
    );
    expect(await m.client.httpsEdges.get(mtls.id)).toEqual(mtls);
  });

  it('allows passthrough once the conflicting modules are removed', async () => {
    const edge = await m.client.httpsEdges.create();
    const route = await m.client.httpsEdgeRoutes.create(edge.id, {
      match_type: 'path_prefix',
      match: '/',
      oauth: validModuleBodies(policyId).oauth,
    });
    await expectApiError(
      m.client.httpsEdges.tlsTermination.replace(edge.id, { terminate_at: 'upstream' }),
      400,
      'ERR_313',
    );
    await m.client.httpsEdgeRoutes.modules.oauth.delete(edge.id, route.id);
    expect(
      (await m.client.httpsEdges.tlsTermination.replace(edge.id, { terminate_at: 'upstream' })).terminate_at,
    ).toBe('upstream');
    // Back at the edge, the modules are allowed again.
    await m.client.httpsEdges.tlsTermination.delete(edge.id);
    expect((await m.client.httpsEdgeRoutes.modules.compression.replace(edge.id, route.id, {})).enabled).toBe(
      true,
    );
  });
});
