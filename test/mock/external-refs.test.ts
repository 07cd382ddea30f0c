import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestMock, type TestMock } from '../helpers/mock-api.js';
import { BACKEND_1, CA_1, expectApiError } from './edges-fixtures.js';

/** Backends and certificate authorities are not served by the mock, but references to them are checked. */
let m: TestMock;
let hostport = 0;
const nextHostport = () => `refs${++hostport}.example.com:443`;
beforeAll(async () => {
  m = await startTestMock();
});
afterAll(async () => {
  await m.close();
});

const UNKNOWN_BACKEND = 'bkdbg_01hzzzzzzzzzzzzzzzzzzzzzz9';
const UNKNOWN_CA = 'ca_01hzzzzzzzzzzzzzzzzzzzzzz9';

describe('route backends must exist in the account', () => {
  it('refuses an unknown backend on route create, update and module PUT, storing nothing', async () => {
    const edge = await m.client.httpsEdges.create({ hostports: [nextHostport()] });
    const err = await expectApiError(
      m.client.httpsEdgeRoutes.create(edge.id, {
        match_type: 'path_prefix',
        match: '/',
        backend: { backend_id: UNKNOWN_BACKEND },
      }),
      400,
      'ERR_393',
    );
    expect(err.details['field']).toBe('body.backend.backend_id');
    expect((await m.client.httpsEdges.get(edge.id)).routes).toEqual([]);

    const route = await m.client.httpsEdgeRoutes.create(edge.id, {
      match_type: 'path_prefix',
      match: '/',
      backend: { backend_id: BACKEND_1 },
    });
    await expectApiError(
      m.client.httpsEdgeRoutes.update(edge.id, route.id, { backend: { backend_id: UNKNOWN_BACKEND } }),
      400,
      'ERR_393',
    );
    await expectApiError(
      m.client.httpsEdgeRoutes.modules.backend.replace(edge.id, route.id, { backend_id: UNKNOWN_BACKEND }),
      400,
      'ERR_393',
    );
    expect((await m.client.httpsEdgeRoutes.get(edge.id, route.id)).backend?.backend.id).toBe(BACKEND_1);
  });

  it('accepts a backend registered through the admin interface, for that account only', async () => {
    const reg = await m.admin('POST', '/admin/accounts/acme/backends', {});
    expect(reg.status).toBe(201);
    expect(reg.json.id).toMatch(/^bkdbg_[0-9a-z]{26}$/);
    const edge = await m.client.httpsEdges.create({ hostports: [nextHostport()] });
    const route = await m.client.httpsEdgeRoutes.create(edge.id, {
      match_type: 'exact_path',
      match: '/x',
      backend: { backend_id: reg.json.id },
    });
    expect(route.backend?.backend.id).toBe(reg.json.id);

    const theirs = await m.otherClient.httpsEdges.create({ hostports: [nextHostport()] });
    await expectApiError(
      m.otherClient.httpsEdgeRoutes.create(theirs.id, {
        match_type: 'exact_path',
        match: '/x',
        backend: { backend_id: reg.json.id },
      }),
      400,
      'ERR_393',
    );
  });

  it('validates admin registrations', async () => {
    const bad = await m.admin('POST', '/admin/accounts/acme/backends', {
      id: 'ca_01hzzzzzzzzzzzzzzzzzzzzzz1',
    });
    expect(bad.status).toBe(400);
    expect(bad.json.error_code).toBe('ERR_140');
    const given = await m.admin('POST', '/admin/accounts/acme/certificate_authorities', {
      id: 'ca_fixed0000000000000000000001',
    });
    expect(given.json.id).toBe('ca_fixed0000000000000000000001');
    expect(
      (await m.admin('DELETE', `/admin/accounts/acme/certificate_authorities/${given.json.id}`)).status,
    ).toBe(204);
    expect(
      (await m.admin('DELETE', `/admin/accounts/acme/certificate_authorities/${given.json.id}`)).status,
    ).toBe(404);
  });
});

describe('mutual TLS certificate authorities must exist in the account', () => {
  it('refuses an unknown certificate authority on edge create, update and module PUT, storing nothing', async () => {
    const hp = nextHostport();
    const err = await expectApiError(
      m.client.httpsEdges.create({
        hostports: [hp],
        mutual_tls: { certificate_authority_ids: [CA_1, UNKNOWN_CA] },
      }),
      400,
      'ERR_315',
    );
    expect(err.details['field']).toBe('body.mutual_tls.certificate_authority_ids[1]');
    // Nothing stored: the hostport is still free.
    const edge = await m.client.httpsEdges.create({ hostports: [hp] });
    await expectApiError(
      m.client.httpsEdges.update(edge.id, { mutual_tls: { certificate_authority_ids: [UNKNOWN_CA] } }),
      400,
      'ERR_315',
    );
    await expectApiError(
      m.client.httpsEdges.mutualTls.replace(edge.id, { certificate_authority_ids: [UNKNOWN_CA] }),
      400,
      'ERR_315',
    );
    expect((await m.client.httpsEdges.get(edge.id)).mutual_tls).toBeNull();
    const ok = await m.client.httpsEdges.mutualTls.replace(edge.id, { certificate_authority_ids: [CA_1] });
    expect(ok.certificate_authorities.map((r) => r.id)).toEqual([CA_1]);
  });
});
