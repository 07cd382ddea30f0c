import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collect } from '../../src/api/client/index.js';
import { startTestMock, type TestMock } from '../helpers/mock-api.js';

let m: TestMock;
beforeAll(async () => {
  m = await startTestMock();
});
afterAll(async () => {
  await m.close();
});

describe('IP policies', () => {
  it('creates, gets, updates and deletes a policy', async () => {
    const created = await m.client.ipPolicies.create({ description: 'office', metadata: '{"team":"net"}' });
    expect(created.id).toMatch(/^ipp_[0-9a-z]{26}$/);
    expect(created.uri).toBe(`${m.url}/ip_policies/${created.id}`);
    expect(created.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(created.description).toBe('office');
    expect(await m.client.ipPolicies.get(created.id)).toEqual(created);

    const updated = await m.client.ipPolicies.update(created.id, { description: 'home' });
    expect(updated).toEqual({ ...created, description: 'home' });

    await m.client.ipPolicies.delete(created.id);
    const res = await m.raw('GET', `/ip_policies/${created.id}`);
    expect(res.status).toBe(404);
  });

  it('answers 201 on create and 204 with no body on delete', async () => {
    const res = await m.raw('POST', '/ip_policies', { body: {} });
    expect(res.status).toBe(201);
    const del = await m.raw('DELETE', `/ip_policies/${res.json.id}`);
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
  });

  it('omits metadata until it is set, then shows it even when empty', async () => {
    const p = await m.client.ipPolicies.create({ description: 'x' });
    const raw1 = await m.raw('GET', `/ip_policies/${p.id}`);
    expect(raw1.json).not.toHaveProperty('metadata');
    await m.client.ipPolicies.update(p.id, { metadata: '' });
    const raw2 = await m.raw('GET', `/ip_policies/${p.id}`);
    expect(raw2.json.metadata).toBe('');
  });

  it('counts description and metadata limits in UTF-8 bytes', async () => {
    // 127 two-byte characters = 254 bytes: fits; 128 = 256 bytes: does not, although it is only 128 characters.
    expect((await m.raw('POST', '/ip_policies', { body: { description: 'é'.repeat(127) } })).status).toBe(
      201,
    );
    const before = (await collect(m.client.ipPolicies.list())).length;
    const tooLong = await m.raw('POST', '/ip_policies', { body: { description: 'é'.repeat(128) } });
    expect(tooLong.status).toBe(400);
    expect(tooLong.json.error_code).toBe('ERR_124');
    expect(tooLong.json.msg).toContain('description');
    const meta = await m.raw('POST', '/ip_policies', { body: { metadata: '€'.repeat(1366) } }); // 4098 bytes
    expect(meta.status).toBe(400);
    expect(meta.json.error_code).toBe('ERR_125');
    expect((await m.raw('POST', '/ip_policies', { body: { metadata: '€'.repeat(1365) } })).status).toBe(201); // 4095 bytes
    expect((await collect(m.client.ipPolicies.list())).length).toBe(before + 1);
  });

  it('refuses an empty update and leaves the policy unchanged', async () => {
    const p = await m.client.ipPolicies.create({ description: 'keep' });
    const res = await m.raw('PATCH', `/ip_policies/${p.id}`, { body: {} });
    expect(res.status).toBe(400);
    expect(res.json.error_code).toBe('ERR_123');
    const tooLong = await m.raw('PATCH', `/ip_policies/${p.id}`, { body: { description: 'x'.repeat(256) } });
    expect(tooLong.json.error_code).toBe('ERR_124');
    expect((await m.client.ipPolicies.get(p.id)).description).toBe('keep');
  });

  it('keeps accounts apart', async () => {
    const mine = await m.client.ipPolicies.create({ description: 'acme only' });
    expect((await m.raw('GET', `/ip_policies/${mine.id}`, { apiKey: m.otherKey })).status).toBe(404);
    expect((await m.raw('DELETE', `/ip_policies/${mine.id}`, { apiKey: m.otherKey })).status).toBe(404);
    const theirs = await collect(m.otherClient.ipPolicies.list());
    expect(theirs.map((p) => p.id)).not.toContain(mine.id);
    expect((await m.client.ipPolicies.get(mine.id)).description).toBe('acme only');
  });
});

describe('paging', () => {
  it('pages more than 100 items newest first with absolute next_page_uri', async () => {
    const fresh = await startTestMock();
    try {
      const ids: string[] = [];
      for (let i = 0; i < 230; i++)
        ids.push((await fresh.client.ipPolicies.create({ description: `p${i}` })).id);
      const newestFirst = [...ids].reverse();

      const first = await fresh.raw('GET', '/ip_policies');
      expect(first.json.ip_policies).toHaveLength(100);
      expect(first.json.uri).toBe(`${fresh.url}/ip_policies`);
      const next = new URL(first.json.next_page_uri);
      expect(`${next.protocol}//${next.host}`).toBe(fresh.url);
      expect(next.searchParams.get('before_id')).toBe(newestFirst[99]);

      for (const limit of [1, 7, 50, 100]) {
        const seen = await collect(fresh.client.ipPolicies.list({ limit }));
        expect(seen.map((p) => p.id)).toEqual(newestFirst);
      }

      // Following next_page_uri to the end: the last page says null.
      let uri: string | null = `/ip_policies?limit=100`;
      let pages = 0;
      while (uri) {
        const res = await fresh.raw('GET', uri.replace(fresh.url, ''));
        pages++;
        uri = res.json.next_page_uri;
      }
      expect(pages).toBe(3);

      const before = await fresh.raw('GET', `/ip_policies?limit=5&before_id=${newestFirst[10]}`);
      expect(before.json.ip_policies.map((p: { id: string }) => p.id)).toEqual(newestFirst.slice(11, 16));
    } finally {
      await fresh.close();
    }
  });

  it('builds next_page_uri from the Host the request used', async () => {
    const fresh = await startTestMock();
    try {
      await fresh.client.ipPolicies.create({});
      await fresh.client.ipPolicies.create({});
      const port = new URL(fresh.url).port;
      const res = await fresh.raw('GET', '/ip_policies?limit=1', { headers: { host: `localhost:${port}` } });
      expect(res.json.next_page_uri).toMatch(new RegExp(`^http://localhost:${port}/ip_policies\\?`));
      expect(res.json.ip_policies[0].uri).toMatch(new RegExp(`^http://localhost:${port}/ip_policies/ipp_`));
    } finally {
      await fresh.close();
    }
  });
});

describe('tunnels', () => {
  it('lists label tunnels brought online through the admin interface, per account', async () => {
    const res = await m.admin('POST', '/admin/accounts/acme/tunnels', {
      forwards_to: 'localhost:8080',
      labels: { 'app-name': 'web' },
    });
    expect(res.status).toBe(201);
    const tunnels = await collect(m.client.tunnels.list());
    const t = tunnels.find((x) => x.id === res.json.id);
    expect(t).toBeDefined();
    expect(t!.labels).toEqual({ 'app-name': 'web' });
    expect(t!.endpoint).toBeUndefined();
    expect(t!.tunnel_session.id).toMatch(/^ts_/);
    expect(t!.tunnel_session.uri).toBe(`${m.url}/tunnel_sessions/${t!.tunnel_session.id}`);
    expect((await collect(m.otherClient.tunnels.list())).map((x) => x.id)).not.toContain(res.json.id);

    expect((await m.admin('DELETE', `/admin/accounts/acme/tunnels/${res.json.id}`)).status).toBe(204);
    expect((await collect(m.client.tunnels.list())).map((x) => x.id)).not.toContain(res.json.id);
  });

  it('validates admin input', async () => {
    const res = await m.admin('POST', '/admin/accounts/acme/tunnels', { forwards_to: 'x', labels: {} });
    expect(res.status).toBe(400);
    expect(res.json.msg).toContain('labels');
    expect(
      (await m.admin('POST', '/admin/accounts/nobody/tunnels', { forwards_to: 'x', labels: { a: 'b' } }))
        .status,
    ).toBe(404);
  });

  it('has no admin interface unless asked for', async () => {
    const fresh = await startTestMock({ admin: undefined });
    try {
      expect(fresh.api.adminUrl).toBeUndefined();
      expect((await fresh.raw('GET', '/admin/accounts')).status).toBe(404);
    } finally {
      await fresh.close();
    }
  });
});
