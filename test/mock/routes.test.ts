import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROUTE_MODULE_NAMES } from '../../src/api/schemas/modules/index.js';
import { startTestMock, type TestMock } from '../helpers/mock-api.js';
import { BACKEND_1, expectApiError } from './edges-fixtures.js';

let m: TestMock;
beforeAll(async () => {
  m = await startTestMock();
});
afterAll(async () => {
  await m.close();
});

const MISSING_EDGE = 'edghts_01hzzzzzzzzzzzzzzzzzzzzzzz';
const MISSING_ROUTE = 'edghtsrt_01hzzzzzzzzzzzzzzzzzzzzzzz';

describe('HTTPS edge routes: operations', () => {
  it('creates a route with every module null and shows it in the edge', async () => {
    const edge = await m.client.httpsEdges.create();
    const res = await m.raw('POST', `/edges/https/${edge.id}/routes`, {
      body: { match_type: 'path_prefix', match: '/' },
    });
    expect(res.status).toBe(201);
    const nulls = Object.fromEntries(ROUTE_MODULE_NAMES.map((n) => [n, null]));
    expect(res.json).toEqual({
      edge_id: edge.id,
      id: expect.stringMatching(/^edghtsrt_[0-9a-z]{26}$/),
      uri: `${m.url}/edges/https/${edge.id}/routes/${res.json.id}`,
      created_at: expect.stringMatching(/Z$/),
      match_type: 'path_prefix',
      match: '/',
      description: '',
      ...nulls,
    });
    expect((await m.client.httpsEdges.get(edge.id)).routes).toEqual([res.json]);
  });

  it('creates, gets, updates and deletes a route through the typed client', async () => {
    const edge = await m.client.httpsEdges.create();
    const r = await m.client.httpsEdgeRoutes.create(edge.id, {
      match_type: 'exact_path',
      match: '/api',
      description: 'api',
      metadata: 'm',
      backend: { backend_id: BACKEND_1 },
    });
    expect(r).toMatchObject({
      edge_id: edge.id,
      match_type: 'exact_path',
      match: '/api',
      description: 'api',
      metadata: 'm',
    });
    expect(r.backend).toEqual({
      enabled: true,
      backend: { id: BACKEND_1, uri: `${m.url}/backends/${BACKEND_1}` },
    });
    expect(await m.client.httpsEdgeRoutes.get(edge.id, r.id)).toEqual(r);

    const u = await m.client.httpsEdgeRoutes.update(edge.id, r.id, {
      match: 'api.example.com/v2',
      description: 'v2',
    });
    expect(u).toEqual({ ...r, match: 'api.example.com/v2', description: 'v2' });
    expect((await m.client.httpsEdges.get(edge.id)).routes).toEqual([u]);

    await m.client.httpsEdgeRoutes.delete(edge.id, r.id);
    await expectApiError(m.client.httpsEdgeRoutes.get(edge.id, r.id), 404, 'ERR_330');
    expect((await m.client.httpsEdges.get(edge.id)).routes).toEqual([]);
    await expectApiError(m.client.httpsEdgeRoutes.delete(edge.id, r.id), 404, 'ERR_330');
  });

  it('keeps routes in creation order inside the edge and drops them with the edge', async () => {
    const edge = await m.client.httpsEdges.create();
    const a = await m.client.httpsEdgeRoutes.create(edge.id, { match_type: 'path_prefix', match: '/a' });
    const b = await m.client.httpsEdgeRoutes.create(edge.id, { match_type: 'path_prefix', match: '/b' });
    expect((await m.client.httpsEdges.get(edge.id)).routes.map((r) => r.id)).toEqual([a.id, b.id]);
    await m.client.httpsEdges.delete(edge.id);
    await expectApiError(m.client.httpsEdgeRoutes.get(edge.id, a.id), 404, 'ERR_300');
  });

  it('has no list operation: GET on the collection answers 405 with Allow: POST', async () => {
    const edge = await m.client.httpsEdges.create();
    const res = await m.raw('GET', `/edges/https/${edge.id}/routes`);
    expect([res.status, res.json.error_code]).toEqual([405, 'ERR_152']);
    expect(res.headers['allow']).toBe('POST');
  });

  it('answers 404 for a missing edge or route, and for another edge or account', async () => {
    const edge = await m.client.httpsEdges.create();
    const other = await m.client.httpsEdges.create();
    const r = await m.client.httpsEdgeRoutes.create(edge.id, { match_type: 'path_prefix', match: '/' });
    await expectApiError(m.client.httpsEdgeRoutes.get(MISSING_EDGE, r.id), 404, 'ERR_300');
    await expectApiError(m.client.httpsEdgeRoutes.get(edge.id, MISSING_ROUTE), 404, 'ERR_330');
    await expectApiError(m.client.httpsEdgeRoutes.get(other.id, r.id), 404, 'ERR_330');
    await expectApiError(
      m.client.httpsEdgeRoutes.create(MISSING_EDGE, { match_type: 'path_prefix', match: '/' }),
      404,
      'ERR_300',
    );
    await expectApiError(m.otherClient.httpsEdgeRoutes.get(edge.id, r.id), 404, 'ERR_300');
    await expectApiError(m.otherClient.httpsEdgeRoutes.delete(edge.id, r.id), 404, 'ERR_300');
    expect(await m.client.httpsEdgeRoutes.get(edge.id, r.id)).toEqual(r);
  });

  it.each([
    ['GET', `/edges/https/ipp_01hzzzzzzzzzzzzzzzzzzzzzzz/routes/${MISSING_ROUTE}`, 'edge_id'],
    ['GET', `/edges/https/${MISSING_EDGE}/routes/edghts_01hzzzzzzzzzzzzzzzzzzzzzzz`, 'id'],
    ['PUT', `/edges/https/${MISSING_EDGE}/routes/ep_01hzzzzzzzzzzzzzzzzzzzzzzz/compression`, 'id'],
    ['POST', `/edges/https/edghtsrt_01hzzzzzzzzzzzzzzzzzzzzzzz/routes`, 'edge_id'],
  ])('checks path id prefixes: %s %s → 400 ERR_140', async (method, path, parameter) => {
    const res = await m.raw(
      method,
      path,
      method === 'GET' ? {} : { body: { match_type: 'path_prefix', match: '/' } },
    );
    expect([res.status, res.json.error_code, res.json.details.parameter]).toEqual([
      400,
      'ERR_140',
      parameter,
    ]);
  });
});

describe('HTTPS edge routes: match rules', () => {
  it.each(['/', '/api', '/api/v1/', 'example.com', 'api.example.com/v1', 'localhost'])(
    'accepts match %j',
    async (match) => {
      const edge = await m.client.httpsEdges.create();
      expect(
        (await m.client.httpsEdgeRoutes.create(edge.id, { match_type: 'path_prefix', match })).match,
      ).toBe(match);
    },
  );

  it.each([
    ['match_type unknown', { match_type: 'regex', match: '/' }, 'ERR_331'],
    ['match_type in upper case', { match_type: 'PATH_PREFIX', match: '/' }, 'ERR_331'],
    ['match_type missing', { match: '/' }, 'ERR_122'],
    ['match missing', { match_type: 'path_prefix' }, 'ERR_122'],
    ['match empty', { match_type: 'path_prefix', match: '' }, 'ERR_332'],
    ['match with a space', { match_type: 'path_prefix', match: '/a b' }, 'ERR_332'],
    ['match with a query', { match_type: 'path_prefix', match: '/a?b=1' }, 'ERR_332'],
    ['match with a scheme', { match_type: 'path_prefix', match: 'https://example.com/x' }, 'ERR_332'],
    ['match with a bad host', { match_type: 'path_prefix', match: 'bad_host.com/x' }, 'ERR_332'],
    ['unknown field', { match_type: 'path_prefix', match: '/', weight: 1 }, 'ERR_120'],
    [
      'description over 255 bytes',
      { match_type: 'path_prefix', match: '/', description: 'x'.repeat(256) },
      'ERR_124',
    ],
    [
      'metadata over 4096 bytes',
      { match_type: 'path_prefix', match: '/', metadata: 'x'.repeat(4097) },
      'ERR_125',
    ],
  ])('refuses %s on create, storing nothing', async (_name, body, code) => {
    const edge = await m.client.httpsEdges.create();
    const res = await m.raw('POST', `/edges/https/${edge.id}/routes`, { body });
    expect([res.status, res.json.error_code]).toEqual([400, code]);
    expect((await m.client.httpsEdges.get(edge.id)).routes).toEqual([]);
  });

  it('keeps (match_type, match) unique per edge', async () => {
    const edge = await m.client.httpsEdges.create();
    const first = await m.client.httpsEdgeRoutes.create(edge.id, { match_type: 'path_prefix', match: '/x' });
    const err = await expectApiError(
      m.client.httpsEdgeRoutes.create(edge.id, { match_type: 'path_prefix', match: '/x' }),
      400,
      'ERR_333',
    );
    expect(err.msg).toContain(first.id);
    expect((await m.client.httpsEdges.get(edge.id)).routes).toHaveLength(1);
    // Another match type, or another edge, may use the same match.
    const exact = await m.client.httpsEdgeRoutes.create(edge.id, { match_type: 'exact_path', match: '/x' });
    const otherEdge = await m.client.httpsEdges.create();
    await m.client.httpsEdgeRoutes.create(otherEdge.id, { match_type: 'path_prefix', match: '/x' });
    // Updating into a duplicate is refused; re-stating a route's own match is not.
    await expectApiError(
      m.client.httpsEdgeRoutes.update(edge.id, exact.id, { match_type: 'path_prefix' }),
      400,
      'ERR_333',
    );
    expect(await m.client.httpsEdgeRoutes.get(edge.id, exact.id)).toEqual(exact);
    expect((await m.client.httpsEdgeRoutes.update(edge.id, first.id, { match: '/x' })).match).toBe('/x');
  });
});

describe('HTTPS edge routes: PATCH semantics', () => {
  it('leaves omitted fields and modules alone and replaces a given module wholesale', async () => {
    const edge = await m.client.httpsEdges.create();
    const r = await m.client.httpsEdgeRoutes.create(edge.id, {
      match_type: 'path_prefix',
      match: '/',
      compression: {},
      circuit_breaker: { num_buckets: 8, volume_threshold: 5, enabled: false },
    });
    expect(r.circuit_breaker).toEqual({
      enabled: false,
      tripped_duration: 10,
      rolling_window: 10,
      num_buckets: 8,
      volume_threshold: 5,
      error_threshold_percentage: 0.5,
    });
    const u = await m.client.httpsEdgeRoutes.update(edge.id, r.id, {
      circuit_breaker: { tripped_duration: 30 },
    });
    // Not merged: fields not given fall back to their defaults.
    expect(u.circuit_breaker).toEqual({
      enabled: true,
      tripped_duration: 30,
      rolling_window: 10,
      num_buckets: 10,
      volume_threshold: 20,
      error_threshold_percentage: 0.5,
    });
    expect(u).toEqual({ ...r, circuit_breaker: u.circuit_breaker });
    const u2 = await m.client.httpsEdgeRoutes.update(edge.id, r.id, { metadata: '' });
    expect(u2).toEqual({ ...u, metadata: '' });
  });

  it('refuses an empty PATCH and a null module, storing nothing', async () => {
    const edge = await m.client.httpsEdges.create();
    const r = await m.client.httpsEdgeRoutes.create(edge.id, {
      match_type: 'path_prefix',
      match: '/',
      compression: {},
    });
    await expectApiError(m.client.httpsEdgeRoutes.update(edge.id, r.id, {}), 400, 'ERR_123');
    const unknown = await m.raw('PATCH', `/edges/https/${edge.id}/routes/${r.id}`, { body: { weight: 1 } });
    expect([unknown.status, unknown.json.error_code]).toEqual([400, 'ERR_120']);
    const res = await m.raw('PATCH', `/edges/https/${edge.id}/routes/${r.id}`, {
      body: { compression: null },
    });
    expect([res.status, res.json.error_code]).toEqual([400, 'ERR_121']);
    const bad = await m.raw('PATCH', `/edges/https/${edge.id}/routes/${r.id}`, {
      body: { description: 'changed', match_type: 'nope' },
    });
    expect([bad.status, bad.json.error_code]).toEqual([400, 'ERR_331']);
    expect(await m.client.httpsEdgeRoutes.get(edge.id, r.id)).toEqual(r);
  });
});
