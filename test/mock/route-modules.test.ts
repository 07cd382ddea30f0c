import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ROUTE_MODULE_CLIENT_NAMES,
  type RouteModuleApi,
} from '../../src/api/client/resources/https-edge-routes.js';
import type { RouteModuleName } from '../../src/api/schemas/modules/index.js';
import { startTestMock, type TestMock } from '../helpers/mock-api.js';
import { BACKEND_1, BACKEND_2, expectApiError, validModuleBodies } from './edges-fixtures.js';

let m: TestMock;
let policyId: string;
beforeAll(async () => {
  m = await startTestMock();
  policyId = (await m.client.ipPolicies.create({ description: 'office' })).id;
});
afterAll(async () => {
  await m.close();
});

/** What each valid body reads back as (server defaults filled in, ids turned into Refs). */
function expectedModule(name: RouteModuleName): Record<string, unknown> {
  const body = validModuleBodies(policyId);
  switch (name) {
    case 'backend':
      return { enabled: true, backend: { id: BACKEND_1, uri: `${m.url}/backends/${BACKEND_1}` } };
    case 'ip_restriction':
      return { enabled: true, ip_policies: [{ id: policyId, uri: `${m.url}/ip_policies/${policyId}` }] };
    case 'websocket_tcp_converter':
      return { enabled: true };
    case 'saml':
      return {
        enabled: true,
        ...body.saml,
        nameid_format: 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent',
      };
    default:
      return { enabled: true, ...body[name] };
  }
}

const modules = Object.entries(ROUTE_MODULE_CLIENT_NAMES) as [
  keyof typeof ROUTE_MODULE_CLIENT_NAMES,
  RouteModuleName,
][];

async function newRoute() {
  const edge = await m.client.httpsEdges.create({
    hostports: [`r${Math.random().toString(36).slice(2)}.example.com:443`],
  });
  const route = await m.client.httpsEdgeRoutes.create(edge.id, { match_type: 'path_prefix', match: '/' });
  return { edge, route };
}

describe('route modules on their own: PUT / GET / DELETE', () => {
  it.each(modules)('%s: replace answers the module, get reads it, delete leaves null', async (key, wire) => {
    const api = m.client.httpsEdgeRoutes.modules[key] as RouteModuleApi<RouteModuleName>;
    const { edge, route } = await newRoute();
    await expectApiError(api.get(edge.id, route.id), 404, 'ERR_350');

    const body = validModuleBodies(policyId)[wire];
    const put = await api.replace(edge.id, route.id, body);
    expect(put).toMatchObject(expectedModule(wire));
    expect(await api.get(edge.id, route.id)).toEqual(put);
    const afterPut = await m.client.httpsEdgeRoutes.get(edge.id, route.id);
    expect(afterPut[wire]).toEqual(put);
    expect(afterPut).toEqual({ ...route, [wire]: put });

    const raw = await m.raw('DELETE', `/edges/https/${edge.id}/routes/${route.id}/${wire}`);
    expect([raw.status, raw.text]).toEqual([204, '']);
    expect(await m.client.httpsEdgeRoutes.get(edge.id, route.id)).toEqual(route);
    await expectApiError(api.get(edge.id, route.id), 404, 'ERR_350');
    await api.delete(edge.id, route.id); // absent already: still 204
  });

  it.each(modules)('%s: can be set on create and on update, and shows in the edge', async (_key, wire) => {
    const body = validModuleBodies(policyId)[wire];
    const edge = await m.client.httpsEdges.create({
      hostports: [`c${Math.random().toString(36).slice(2)}.example.com:443`],
    });
    const created = await m.client.httpsEdgeRoutes.create(edge.id, {
      match_type: 'path_prefix',
      match: '/',
      [wire]: body,
    });
    expect(created[wire]).toMatchObject(expectedModule(wire));
    const other = await m.client.httpsEdgeRoutes.create(edge.id, { match_type: 'exact_path', match: '/x' });
    const updated = await m.client.httpsEdgeRoutes.update(edge.id, other.id, { [wire]: body });
    expect(updated[wire]).toMatchObject(expectedModule(wire));
    expect((await m.client.httpsEdges.get(edge.id)).routes.map((r) => r[wire] !== null)).toEqual([
      true,
      true,
    ]);
  });

  it('defaults enabled to true for every module, user_agent_filter included, and keeps false', async () => {
    const { edge, route } = await newRoute();
    const ua = await m.client.httpsEdgeRoutes.modules.userAgentFilter.replace(edge.id, route.id, {
      deny: ['bot'],
    });
    expect(ua).toEqual({ enabled: true, allow: [], deny: ['bot'] });
    const off = await m.client.httpsEdgeRoutes.modules.compression.replace(edge.id, route.id, {
      enabled: false,
    });
    expect(off).toEqual({ enabled: false });
  });

  it('replaces a module wholesale on PUT', async () => {
    const { edge, route } = await newRoute();
    const api = m.client.httpsEdgeRoutes.modules.requestHeaders;
    await api.replace(edge.id, route.id, { add: { 'X-A': '1' }, remove: ['X-B'] });
    const second = await api.replace(edge.id, route.id, { remove: ['X-C'] });
    expect(second).toEqual({ enabled: true, add: {}, remove: ['X-C'] });
    const backend = m.client.httpsEdgeRoutes.modules.backend;
    await backend.replace(edge.id, route.id, { backend_id: BACKEND_1 });
    expect(
      (await backend.replace(edge.id, route.id, { backend_id: BACKEND_2, enabled: false })).backend.id,
    ).toBe(BACKEND_2);
  });

  it('passes header maps through untouched (names keep their case)', async () => {
    const { edge, route } = await newRoute();
    const add = { 'X-Custom-Header': 'Mixed Case Value', 'x-lower-case': 'v', 'X-UPPER': 'a=b; c="d"' };
    await m.client.httpsEdgeRoutes.modules.responseHeaders.replace(edge.id, route.id, { add });
    const raw = await m.raw('GET', `/edges/https/${edge.id}/routes/${route.id}`);
    expect(raw.json.response_headers.add).toEqual(add);
    expect(Object.keys(raw.json.response_headers.add)).toEqual(Object.keys(add));
    const typed = await m.client.httpsEdgeRoutes.get(edge.id, route.id);
    expect(typed.response_headers?.add).toEqual(add);
    expect((await m.client.httpsEdges.get(edge.id)).routes[0]!.response_headers?.add).toEqual(add);
  });

  it('takes the bare module object as PUT body (a wrapper is refused, nothing stored)', async () => {
    const { edge, route } = await newRoute();
    const res = await m.raw('PUT', `/edges/https/${edge.id}/routes/${route.id}/compression`, {
      body: { edge_id: edge.id, id: route.id, module: { enabled: true } },
    });
    expect([res.status, res.json.error_code]).toEqual([400, 'ERR_120']);
    expect((await m.client.httpsEdgeRoutes.get(edge.id, route.id)).compression).toBeNull();
  });

  it('answers 404 for a module of a missing route or edge', async () => {
    const { edge } = await newRoute();
    const api = m.client.httpsEdgeRoutes.modules.compression;
    await expectApiError(api.get(edge.id, 'edghtsrt_01hzzzzzzzzzzzzzzzzzzzzzzz'), 404, 'ERR_330');
    await expectApiError(
      api.replace('edghts_01hzzzzzzzzzzzzzzzzzzzzzzz', 'edghtsrt_01hzzzzzzzzzzzzzzzzzzzzzzz', {}),
      404,
      'ERR_300',
    );
  });
});

describe('ip_restriction references', () => {
  it('keeps a deleted IP policy in the route’s ip_policies', async () => {
    const { edge, route } = await newRoute();
    const keep = await m.client.ipPolicies.create({ description: 'keep' });
    const gone = await m.client.ipPolicies.create({ description: 'gone' });
    await m.client.httpsEdgeRoutes.modules.ipRestriction.replace(edge.id, route.id, {
      ip_policy_ids: [keep.id, gone.id],
    });
    await m.client.ipPolicies.delete(gone.id);
    const refs = [keep, gone].map((p) => ({ id: p.id, uri: `${m.url}/ip_policies/${p.id}` }));
    expect(await m.client.httpsEdgeRoutes.modules.ipRestriction.get(edge.id, route.id)).toEqual({
      enabled: true,
      ip_policies: refs,
    });
    // Other updates of the route keep the reference; setting it anew checks existence again.
    const u = await m.client.httpsEdgeRoutes.update(edge.id, route.id, { description: 'still here' });
    expect(u.ip_restriction?.ip_policies).toEqual(refs);
    await expectApiError(
      m.client.httpsEdgeRoutes.modules.ipRestriction.replace(edge.id, route.id, { ip_policy_ids: [gone.id] }),
      400,
      'ERR_397',
    );
    expect((await m.client.httpsEdgeRoutes.get(edge.id, route.id)).ip_restriction?.ip_policies).toEqual(refs);
  });

  it('refuses another account’s IP policy', async () => {
    const { edge, route } = await newRoute();
    const foreign = await m.otherClient.ipPolicies.create();
    const err = await expectApiError(
      m.client.httpsEdgeRoutes.modules.ipRestriction.replace(edge.id, route.id, {
        ip_policy_ids: [foreign.id],
      }),
      400,
      'ERR_397',
    );
    expect(err.details['field']).toBe('body.ip_policy_ids[0]');
    expect((await m.client.httpsEdgeRoutes.get(edge.id, route.id)).ip_restriction).toBeNull();
  });
});
