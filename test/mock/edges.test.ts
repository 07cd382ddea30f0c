import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collect } from '../../src/api/client/index.js';
import { startTestMock, type TestMock } from '../helpers/mock-api.js';
import { CA_1, CA_2, expectApiError } from './edges-fixtures.js';

let m: TestMock;
beforeAll(async () => {
  m = await startTestMock();
});
afterAll(async () => {
  await m.close();
});

let hostSeq = 0;
/** A hostport no other test uses. */
const hp = (port = 443) => `edge${++hostSeq}.example.com:${port}`;

async function edgeIds(client = m.client): Promise<string[]> {
  return (await collect(client.httpsEdges.list())).map((e) => e.id);
}

describe('HTTPS edges: operations', () => {
  it('creates an edge without modules: null modules, no routes', async () => {
    const res = await m.raw('POST', '/edges/https', { body: {} });
    expect(res.status).toBe(201);
    expect(res.json).toEqual({
      id: expect.stringMatching(/^edghts_[0-9a-z]{26}$/),
      uri: `${m.url}/edges/https/${res.json.id}`,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
      description: '',
      hostports: [],
      mutual_tls: null,
      tls_termination: null,
      routes: [],
    });
  });

  it('creates, gets, updates and deletes an edge through the typed client', async () => {
    const host = hp();
    const created = await m.client.httpsEdges.create({
      description: 'web',
      metadata: '{"team":"web"}',
      hostports: [host],
      mutual_tls: { certificate_authority_ids: [CA_1] },
      tls_termination: { min_version: '1.3' },
    });
    expect(created).toMatchObject({
      description: 'web',
      metadata: '{"team":"web"}',
      hostports: [host],
      mutual_tls: {
        enabled: true,
        certificate_authorities: [{ id: CA_1, uri: `${m.url}/certificate_authorities/${CA_1}` }],
      },
      tls_termination: { enabled: true, terminate_at: 'edge', min_version: '1.3' },
      routes: [],
    });
    expect(await m.client.httpsEdges.get(created.id)).toEqual(created);

    const updated = await m.client.httpsEdges.update(created.id, { description: 'web 2' });
    expect(updated).toEqual({ ...created, description: 'web 2' });
    expect(await m.client.httpsEdges.get(created.id)).toEqual(updated);

    await m.client.httpsEdges.delete(created.id);
    await expectApiError(m.client.httpsEdges.get(created.id), 404, 'ERR_300');
    expect(await edgeIds()).not.toContain(created.id);
    await expectApiError(m.client.httpsEdges.delete(created.id), 404, 'ERR_300');
  });

  it('answers 204 with an empty body on delete', async () => {
    const e = await m.client.httpsEdges.create();
    const del = await m.raw('DELETE', `/edges/https/${e.id}`);
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
  });

  it('lists newest first, lazily, page by page via next_page_uri', async () => {
    const fresh = await startTestMock();
    try {
      const made = [];
      for (let i = 0; i < 5; i++) made.push(await fresh.client.httpsEdges.create({ description: `e${i}` }));
      const page1 = await fresh.raw('GET', '/edges/https?limit=2');
      expect(page1.status).toBe(200);
      expect(page1.json.uri).toBe(`${fresh.url}/edges/https`);
      expect(page1.json.https_edges.map((e: { id: string }) => e.id)).toEqual([made[4]!.id, made[3]!.id]);
      expect(page1.json.next_page_uri).toBe(`${fresh.url}/edges/https?limit=2&before_id=${made[3]!.id}`);
      const listed = await collect(fresh.client.httpsEdges.list({ limit: 2 }));
      expect(listed.map((e) => e.description)).toEqual(['e4', 'e3', 'e2', 'e1', 'e0']);
      const last = await fresh.raw('GET', `/edges/https?limit=2&before_id=${made[1]!.id}`);
      expect(last.json.next_page_uri).toBeNull();
    } finally {
      await fresh.close();
    }
  });

  it('keeps accounts apart', async () => {
    const mine = await m.client.httpsEdges.create();
    await expectApiError(m.otherClient.httpsEdges.get(mine.id), 404, 'ERR_300');
    await expectApiError(m.otherClient.httpsEdges.update(mine.id, { description: 'x' }), 404, 'ERR_300');
    await expectApiError(m.otherClient.httpsEdges.delete(mine.id), 404, 'ERR_300');
    expect(await edgeIds(m.otherClient)).not.toContain(mine.id);
    expect((await m.client.httpsEdges.get(mine.id)).id).toBe(mine.id);
  });

  it('checks the id prefix in the path (400, not 404)', async () => {
    const res = await m.raw('GET', '/edges/https/ipp_01hzzzzzzzzzzzzzzzzzzzzzzz');
    expect(res.status).toBe(400);
    expect(res.json.error_code).toBe('ERR_140');
    expect(
      (await m.raw('PATCH', '/edges/https/edghts_', { body: { description: 'x' } })).json.error_code,
    ).toBe('ERR_140');
  });
});

describe('HTTPS edges: PATCH semantics', () => {
  it('leaves omitted fields alone and replaces given lists and modules wholesale', async () => {
    const [a, b, c] = [hp(), hp(), hp(8443)];
    const e = await m.client.httpsEdges.create({
      description: 'd',
      hostports: [a, b],
      mutual_tls: { enabled: false, certificate_authority_ids: [CA_1, CA_2] },
      tls_termination: { min_version: '1.3' },
    });
    const u1 = await m.client.httpsEdges.update(e.id, { hostports: [c] });
    expect(u1).toEqual({ ...e, hostports: [c] });
    // The module given replaces the stored one: enabled falls back to its default, one CA left.
    const u2 = await m.client.httpsEdges.update(e.id, { mutual_tls: { certificate_authority_ids: [CA_2] } });
    expect(u2.mutual_tls).toEqual({
      enabled: true,
      certificate_authorities: [{ id: CA_2, uri: `${m.url}/certificate_authorities/${CA_2}` }],
    });
    const u3 = await m.client.httpsEdges.update(e.id, { tls_termination: { enabled: false } });
    expect(u3.tls_termination).toEqual({ enabled: false, terminate_at: 'edge', min_version: '1.2' });
    expect(u3).toMatchObject({ description: 'd', hostports: [c] });
    // The old hostports are free again.
    expect((await m.client.httpsEdges.create({ hostports: [a, b] })).hostports).toEqual([a, b]);
  });

  it('refuses an empty PATCH (ERR_123) and a null module (modules are removed with DELETE)', async () => {
    const e = await m.client.httpsEdges.create({ description: 'keep', tls_termination: {} });
    await expectApiError(m.client.httpsEdges.update(e.id, {}), 400, 'ERR_123');
    const res = await m.raw('PATCH', `/edges/https/${e.id}`, { body: { tls_termination: null } });
    expect(res.status).toBe(400);
    expect(res.json.error_code).toBe('ERR_121');
    expect(await m.client.httpsEdges.get(e.id)).toEqual(e);
  });
});

describe('HTTPS edges: hostports', () => {
  it('normalizes hostports (host lower-cased)', async () => {
    const e = await m.client.httpsEdges.create({ hostports: ['Shop.Example.COM:443'] });
    expect(e.hostports).toEqual(['shop.example.com:443']);
  });

  it('lets a hostport belong to one edge of the account only', async () => {
    const shared = hp();
    const first = await m.client.httpsEdges.create({ hostports: [shared] });
    const before = await edgeIds();
    const err = await expectApiError(
      m.client.httpsEdges.create({ hostports: [hp(), shared.toUpperCase()] }),
      400,
      'ERR_303',
    );
    expect(err.msg).toContain(first.id);
    expect(err.details['field']).toBe('body.hostports[1]');
    expect(await edgeIds()).toEqual(before);

    const second = await m.client.httpsEdges.create({ hostports: [hp()] });
    await expectApiError(m.client.httpsEdges.update(second.id, { hostports: [shared] }), 400, 'ERR_303');
    expect(await m.client.httpsEdges.get(second.id)).toEqual(second);

    // Re-stating an edge's own hostports is fine; another account may use the same hostport.
    expect((await m.client.httpsEdges.update(first.id, { hostports: [shared] })).hostports).toEqual([shared]);
    expect((await m.otherClient.httpsEdges.create({ hostports: [shared] })).hostports).toEqual([shared]);

    // Deleting the edge frees its hostports.
    await m.client.httpsEdges.delete(first.id);
    expect((await m.client.httpsEdges.update(second.id, { hostports: [shared] })).hostports).toEqual([
      shared,
    ]);
  });

  it.each([
    ['no port', ['example.com'], 'ERR_301'],
    ['underscore in host', ['bad_host.example.com:443'], 'ERR_301'],
    ['IP literal', ['10.0.0.1:443'], 'ERR_301'],
    ['wildcard', ['*.example.com:443'], 'ERR_301'],
    ['empty host', [':443'], 'ERR_301'],
    ['port 0', ['example.com:0'], 'ERR_302'],
    ['port 65536', ['example.com:65536'], 'ERR_302'],
    ['port not a number', ['example.com:https'], 'ERR_302'],
    ['repeated', ['dup.example.com:443', 'DUP.example.com:443'], 'ERR_304'],
    ['not a list', 'example.com:443', 'ERR_121'],
  ])(
    'refuses a bad hostport list (%s) on create and update, storing nothing',
    async (_name, hostports, code) => {
      const e = await m.client.httpsEdges.create({ hostports: [hp()] });
      const before = await edgeIds();
      const created = await m.raw('POST', '/edges/https', { body: { hostports } });
      expect([created.status, created.json.error_code]).toEqual([400, code]);
      expect(created.json.msg).toContain('hostports');
      expect(await edgeIds()).toEqual(before);
      const patched = await m.raw('PATCH', `/edges/https/${e.id}`, { body: { hostports } });
      expect([patched.status, patched.json.error_code]).toEqual([400, code]);
      expect(await m.client.httpsEdges.get(e.id)).toEqual(e);
    },
  );

  it('accepts ports 1 and 65535', async () => {
    const e = await m.client.httpsEdges.create({ hostports: [hp(1), hp(65535)] });
    expect(e.hostports).toHaveLength(2);
  });
});

describe('HTTPS edges: field rules', () => {
  it.each([
    ['unknown field', { colour: 'blue' }, 'ERR_120'],
    ['description over 255 bytes', { description: 'é'.repeat(128) }, 'ERR_124'],
    ['metadata over 4096 bytes', { metadata: 'x'.repeat(4097) }, 'ERR_125'],
    ['mutual_tls without CAs', { mutual_tls: { certificate_authority_ids: [] } }, 'ERR_314'],
    ['mutual_tls CA id list missing', { mutual_tls: { enabled: true } }, 'ERR_122'],
    [
      'mutual_tls CA id with the wrong prefix',
      { mutual_tls: { certificate_authority_ids: ['ipp_abc'] } },
      'ERR_140',
    ],
    ['mutual_tls CA listed twice', { mutual_tls: { certificate_authority_ids: [CA_1, CA_1] } }, 'ERR_399'],
    ['mutual_tls unknown field', { mutual_tls: { certificate_authority_ids: [CA_1], cas: [] } }, 'ERR_120'],
    ['terminate_at agent', { tls_termination: { terminate_at: 'agent' } }, 'ERR_310'],
    ['min_version 1.4', { tls_termination: { min_version: '1.4' } }, 'ERR_311'],
    ['min_version as a number', { tls_termination: { min_version: 1.2 } }, 'ERR_121'],
    [
      'min_version with upstream',
      { tls_termination: { terminate_at: 'upstream', min_version: '1.2' } },
      'ERR_312',
    ],
    [
      'mutual TLS with upstream termination',
      { mutual_tls: { certificate_authority_ids: [CA_1] }, tls_termination: { terminate_at: 'upstream' } },
      'ERR_313',
    ],
  ])('refuses %s with a specific code, storing nothing', async (_name, body, code) => {
    const before = await edgeIds();
    const res = await m.raw('POST', '/edges/https', { body });
    expect(res.status).toBe(400);
    expect(res.json.error_code).toBe(code);
    expect(res.json.details.operation_id).toMatch(/^op_/);
    expect(await edgeIds()).toEqual(before);
  });

  it('defaults tls_termination to the edge with TLS 1.2; min_version is null when passing through', async () => {
    const atEdge = await m.client.httpsEdges.create({ tls_termination: {} });
    expect(atEdge.tls_termination).toEqual({ enabled: true, terminate_at: 'edge', min_version: '1.2' });
    const explicitNull = await m.client.httpsEdges.create({ tls_termination: { min_version: null } });
    expect(explicitNull.tls_termination?.min_version).toBe('1.2');
    for (const v of ['1.0', '1.1', '1.2', '1.3'] as const) {
      expect(
        (await m.client.httpsEdges.create({ tls_termination: { min_version: v } })).tls_termination
          ?.min_version,
      ).toBe(v);
    }
    const upstream = await m.client.httpsEdges.create({
      tls_termination: { terminate_at: 'upstream', min_version: null },
    });
    expect(upstream.tls_termination).toEqual({ enabled: true, terminate_at: 'upstream', min_version: null });
  });
});

describe('HTTPS edges: edge modules on their own', () => {
  it('replaces, reads and removes mutual_tls', async () => {
    const e = await m.client.httpsEdges.create();
    await expectApiError(m.client.httpsEdges.mutualTls.get(e.id), 404, 'ERR_350');
    const put = await m.client.httpsEdges.mutualTls.replace(e.id, {
      certificate_authority_ids: [CA_1, CA_2],
    });
    expect(put).toEqual({
      enabled: true,
      certificate_authorities: [
        { id: CA_1, uri: `${m.url}/certificate_authorities/${CA_1}` },
        { id: CA_2, uri: `${m.url}/certificate_authorities/${CA_2}` },
      ],
    });
    expect(await m.client.httpsEdges.mutualTls.get(e.id)).toEqual(put);
    expect((await m.client.httpsEdges.get(e.id)).mutual_tls).toEqual(put);
    const replaced = await m.client.httpsEdges.mutualTls.replace(e.id, {
      enabled: false,
      certificate_authority_ids: [CA_2],
    });
    expect(replaced.certificate_authorities.map((r) => r.id)).toEqual([CA_2]);
    expect(replaced.enabled).toBe(false);

    await expectApiError(
      m.client.httpsEdges.mutualTls.replace(e.id, { certificate_authority_ids: [] }),
      400,
      'ERR_314',
    );
    expect(await m.client.httpsEdges.mutualTls.get(e.id)).toEqual(replaced);

    const del = await m.raw('DELETE', `/edges/https/${e.id}/mutual_tls`);
    expect([del.status, del.text]).toEqual([204, '']);
    expect((await m.client.httpsEdges.get(e.id)).mutual_tls).toBeNull();
    await expectApiError(m.client.httpsEdges.mutualTls.get(e.id), 404, 'ERR_350');
    await m.client.httpsEdges.mutualTls.delete(e.id); // removing an absent module is not an error
  });

  it('replaces, reads and removes tls_termination', async () => {
    const e = await m.client.httpsEdges.create();
    const put = await m.client.httpsEdges.tlsTermination.replace(e.id, { min_version: '1.3' });
    expect(put).toEqual({ enabled: true, terminate_at: 'edge', min_version: '1.3' });
    expect(await m.client.httpsEdges.tlsTermination.get(e.id)).toEqual(put);
    const up = await m.client.httpsEdges.tlsTermination.replace(e.id, { terminate_at: 'upstream' });
    expect(up).toEqual({ enabled: true, terminate_at: 'upstream', min_version: null });
    await expectApiError(
      m.client.httpsEdges.tlsTermination.replace(e.id, { terminate_at: 'upstream', min_version: '1.3' }),
      400,
      'ERR_312',
    );
    expect((await m.client.httpsEdges.get(e.id)).tls_termination).toEqual(up);
    await m.client.httpsEdges.tlsTermination.delete(e.id);
    expect((await m.client.httpsEdges.get(e.id)).tls_termination).toBeNull();
    await expectApiError(m.client.httpsEdges.tlsTermination.get(e.id), 404, 'ERR_350');
  });

  it('takes the bare module object as the PUT body (a wrapper is an unknown field)', async () => {
    const e = await m.client.httpsEdges.create();
    const res = await m.raw('PUT', `/edges/https/${e.id}/tls_termination`, {
      body: { edge_id: e.id, module: { min_version: '1.3' } },
    });
    expect([res.status, res.json.error_code]).toEqual([400, 'ERR_120']);
    expect((await m.client.httpsEdges.get(e.id)).tls_termination).toBeNull();
  });

  it('answers 404 for modules of a missing edge and 405 for other methods', async () => {
    await expectApiError(
      m.client.httpsEdges.mutualTls.get('edghts_01hzzzzzzzzzzzzzzzzzzzzzzz'),
      404,
      'ERR_300',
    );
    const post = await m.raw('POST', `/edges/https/edghts_01hzzzzzzzzzzzzzzzzzzzzzzz/mutual_tls`, {
      body: {},
    });
    expect([post.status, post.json.error_code]).toEqual([405, 'ERR_152']);
  });
});
