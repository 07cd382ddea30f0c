import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collect, hasErrorCode } from '../../src/api/client/index.js';
import { startTestMock, type TestMock } from '../helpers/mock-api.js';

let m: TestMock;
beforeAll(async () => {
  m = await startTestMock();
});
afterAll(async () => {
  await m.close();
});

let seq = 0;
/** A fresh URL per test, so tests in this file never share one. */
function freshUrl(scheme = 'http', port?: number): string {
  seq++;
  return `${scheme}://svc${seq}.ns${port !== undefined ? `:${port}` : ''}`;
}

async function listAll(client = m.client) {
  return collect(client.endpoints.list());
}

describe('endpoints: CRUD', () => {
  it('creates, gets, lists, updates and deletes an endpoint through the typed client', async () => {
    const created = await m.client.endpoints.create({
      url: 'http://crud.demo',
      bindings: ['kubernetes'],
      description: 'web',
      metadata: '{"team":"a"}',
    });
    expect(created.id).toMatch(/^ep_[0-9a-z]{26}$/);
    expect(created).toMatchObject({
      uri: `${m.url}/endpoints/${created.id}`,
      url: 'http://crud.demo:80',
      public_url: 'http://crud.demo:80',
      proto: 'http',
      host: 'crud.demo',
      port: 80,
      hostport: 'crud.demo:80',
      bindings: ['kubernetes'],
      type: 'cloud',
      description: 'web',
      metadata: '{"team":"a"}',
      pooling_enabled: false,
    });
    expect(created.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(created.updated_at).toBe(created.created_at);
    expect(created).not.toHaveProperty('tunnel');
    expect(created).not.toHaveProperty('upstream_url');
    expect(await m.client.endpoints.get(created.id)).toEqual(created);
    expect((await listAll()).map((e) => e.id)).toContain(created.id);

    const updated = await m.client.endpoints.update(created.id, {
      url: 'tcp://crud.demo:5432',
      description: 'db',
    });
    expect(updated).toMatchObject({
      id: created.id,
      url: 'tcp://crud.demo:5432',
      proto: 'tcp',
      port: 5432,
      hostport: 'crud.demo:5432',
      public_url: 'tcp://crud.demo:5432',
      description: 'db',
      metadata: '{"team":"a"}',
    });
    expect(await m.client.endpoints.get(created.id)).toEqual(updated);

    await m.client.endpoints.delete(created.id);
    const gone = await m.raw('GET', `/endpoints/${created.id}`);
    expect(gone.status).toBe(404);
    expect(gone.json.error_code).toBe('ERR_150');
    expect((await m.raw('DELETE', `/endpoints/${created.id}`)).status).toBe(404);
  });

  it('answers 201 on create and 204 with an empty body on delete', async () => {
    const res = await m.raw('POST', '/endpoints', { body: { url: freshUrl(), bindings: ['kubernetes'] } });
    expect(res.status).toBe(201);
    const del = await m.raw('DELETE', `/endpoints/${res.json.id}`);
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
  });

  it('rejects unknown fields, missing fields, an empty update and a wrong id prefix', async () => {
    const before = (await listAll()).length;
    const unknown = await m.raw('POST', '/endpoints', {
      body: { url: freshUrl(), bindings: ['kubernetes'], type: 'cloud' },
    });
    expect([unknown.status, unknown.json.error_code]).toEqual([400, 'ERR_120']);
    const noUrl = await m.raw('POST', '/endpoints', { body: { bindings: ['kubernetes'] } });
    expect([noUrl.status, noUrl.json.error_code]).toEqual([400, 'ERR_122']);
    expect(noUrl.json.msg).toContain('url');
    const noBindings = await m.raw('POST', '/endpoints', { body: { url: freshUrl() } });
    expect([noBindings.status, noBindings.json.error_code]).toEqual([400, 'ERR_122']);
    expect((await listAll()).length).toBe(before);

    const ep = await m.client.endpoints.create({ url: freshUrl(), bindings: ['kubernetes'] });
    const empty = await m.raw('PATCH', `/endpoints/${ep.id}`, { body: {} });
    expect([empty.status, empty.json.error_code]).toEqual([400, 'ERR_123']);
    const bindings = await m.raw('PATCH', `/endpoints/${ep.id}`, { body: { bindings: ['kubernetes'] } });
    expect([bindings.status, bindings.json.error_code]).toEqual([400, 'ERR_120']);
    const prefix = await m.raw('GET', '/endpoints/ipp_01234567890123456789012345');
    expect([prefix.status, prefix.json.error_code]).toEqual([400, 'ERR_140']);
  });

  it('accepts only bindings ["kubernetes"]', async () => {
    for (const bindings of [[], ['public'], ['internal'], ['kubernetes', 'kubernetes'], ['Kubernetes']]) {
      const res = await m.raw('POST', '/endpoints', { body: { url: freshUrl(), bindings } });
      expect([res.status, res.json.error_code], JSON.stringify(bindings)).toEqual([400, 'ERR_510']);
    }
  });

  it('checks description and metadata limits in UTF-8 bytes', async () => {
    const d = await m.raw('POST', '/endpoints', {
      body: { url: freshUrl(), bindings: ['kubernetes'], description: 'é'.repeat(128) },
    });
    expect(d.json.error_code).toBe('ERR_124');
    const md = await m.raw('POST', '/endpoints', {
      body: { url: freshUrl(), bindings: ['kubernetes'], metadata: '€'.repeat(1366) },
    });
    expect(md.json.error_code).toBe('ERR_125');
  });

  it('shows metadata only once set', async () => {
    const ep = await m.client.endpoints.create({ url: freshUrl(), bindings: ['kubernetes'] });
    expect((await m.raw('GET', `/endpoints/${ep.id}`)).json).not.toHaveProperty('metadata');
    expect((await m.client.endpoints.update(ep.id, { metadata: '' })).metadata).toBe('');
  });

  it('lists with the kubernetes-binding filter and rejects other filters', async () => {
    const ep = await m.client.endpoints.create({ url: freshUrl(), bindings: ['kubernetes'] });
    const filtered = await collect(m.client.endpoints.list({ filter: '"kubernetes" in obj.bindings' }));
    expect(filtered.map((e) => e.id)).toContain(ep.id);
    const spaced = await m.raw(
      'GET',
      `/endpoints?filter=${encodeURIComponent('  "kubernetes"   in obj.bindings ')}`,
    );
    expect(spaced.status).toBe(200);
    for (const f of ['"public" in obj.bindings', 'true', 'obj.url == "x"']) {
      const res = await m.raw('GET', `/endpoints?filter=${encodeURIComponent(f)}`);
      expect([res.status, res.json.error_code], f).toEqual([400, 'ERR_540']);
    }
    const binding = await m.raw('GET', '/endpoints?binding=kubernetes');
    expect([binding.status, binding.json.error_code]).toEqual([400, 'ERR_130']);
  });

  it('pages the list newest first', async () => {
    const acct = await startTestMock();
    try {
      const ids: string[] = [];
      for (let i = 0; i < 7; i++) {
        ids.push(
          (await acct.client.endpoints.create({ url: `http://p${i}.ns`, bindings: ['kubernetes'] })).id,
        );
      }
      const first = await acct.raw('GET', '/endpoints?limit=3');
      expect(first.json.endpoints.map((e: { id: string }) => e.id)).toEqual(ids.slice(-3).reverse());
      expect(first.json.next_page_uri).toMatch(
        /^http:\/\/127\.0\.0\.1:\d+\/endpoints\?limit=3&before_id=ep_/,
      );
      expect((await collect(acct.client.endpoints.list({ limit: 2 }))).map((e) => e.id)).toEqual(
        [...ids].reverse(),
      );
    } finally {
      await acct.close();
    }
  });
});

describe('endpoints: URL rules through the API', () => {
  it.each([
    ['http://app.example', 'http://app.example:80'],
    ['http://app.example:12345', 'http://app.example:12345'],
    ['tcp://app.example:443', 'tcp://app.example:443'],
  ])('%s is accepted', async (url, canonical) => {
    const ep = await m.client.endpoints.create({ url, bindings: ['kubernetes'] });
    expect(ep.url).toBe(canonical);
    await m.client.endpoints.delete(ep.id);
  });

  it.each([
    ['https://app.example', 2, 'ERR_501'],
    ['tls://app.example:12345', 2, 'ERR_501'],
    ['http://app.foo.bar', 3, 'ERR_502'],
    ['tcp://app.example', 4, 'ERR_503'],
    ['http://*.ns', 3, 'ERR_502'],
    ['http://app.ns:0', 4, 'ERR_503'],
    ['http://app.ns:65536', 4, 'ERR_503'],
    ['http://App.ns', 3, 'ERR_502'],
    ['http://app.ns/path', 1, 'ERR_500'],
    ['app.ns', 1, 'ERR_500'],
  ])('%s is rejected with rule %i (%s), nothing stored', async (url, rule, code) => {
    const before = (await listAll()).length;
    const res = await m.raw('POST', '/endpoints', { body: { url, bindings: ['kubernetes'] } });
    expect(res.status).toBe(400);
    expect(res.json.error_code).toBe(code);
    expect(res.json.msg).toContain(`rule ${rule}:`);
    expect(res.json.details.field).toBe('body.url');
    expect((await listAll()).length).toBe(before);
  });

  // Rule 3 as the spec states it: two RFC 1123 labels. A WHATWG URL parser reads the first two
  // as the IPv4 address 1.0.0.2, and a Service name must start with a letter, so a cluster
  // cannot hold them; the API still accepts them and the controller reports them as invalid-url
  // (docs/api/endpoints-and-operators.md).
  it.each([['http://1.2'], ['http://0x1.2'], ['http://9svc.ns'], ['tcp://1.2:5432']])(
    "%s passes the API's rule 3 though no cluster can hold it",
    async (url) => {
      const ep = await m.client.endpoints.create({ url, bindings: ['kubernetes'] });
      expect(ep.url).toBe(url.includes(':5432') ? url : `${url}:80`);
      expect(ep.host).toBe(url.replace(/^\w+:\/\//, '').replace(/:\d+$/, ''));
      await m.client.endpoints.delete(ep.id);
    },
  );

  it('applies the rules to PATCH too, leaving the endpoint unchanged', async () => {
    const ep = await m.client.endpoints.create({ url: freshUrl(), bindings: ['kubernetes'] });
    const res = await m.raw('PATCH', `/endpoints/${ep.id}`, { body: { url: 'https://x.y' } });
    expect([res.status, res.json.error_code]).toEqual([400, 'ERR_501']);
    expect(await m.client.endpoints.get(ep.id)).toEqual(ep);
  });
});

describe('endpoints: account scoping and pooling', () => {
  it('lets two accounts hold the same URL with no conflict and no pooling, each seeing only its own', async () => {
    const url = 'http://shared.scope';
    const a = await m.client.endpoints.create({ url, bindings: ['kubernetes'] });
    const b = await m.otherClient.endpoints.create({ url, bindings: ['kubernetes'] });
    expect(a.pooling_enabled).toBe(false);
    expect(b.pooling_enabled).toBe(false);
    expect((await listAll()).map((e) => e.id)).not.toContain(b.id);
    expect((await listAll(m.otherClient)).map((e) => e.id)).not.toContain(a.id);
    const cross = await m.raw('GET', `/endpoints/${b.id}`);
    expect(cross.status).toBe(404);
    expect((await m.raw('DELETE', `/endpoints/${b.id}`)).status).toBe(404);
  });

  it('allows identical URLs in one account only when pooling is enabled on all of them', async () => {
    const url = freshUrl();
    const canonical = `${url}:80`;
    const first = await m.client.endpoints.create({ url, bindings: ['kubernetes'] });
    // The same URL spelled with its default port is the same URL.
    const dup = await m.raw('POST', '/endpoints', { body: { url: canonical, bindings: ['kubernetes'] } });
    expect([dup.status, dup.json.error_code]).toEqual([400, 'ERR_520']);
    expect(dup.json.details.conflicting_endpoint).toBe(first.id);
    const pooledNew = await m.raw('POST', '/endpoints', {
      body: { url, bindings: ['kubernetes'], pooling_enabled: true },
    });
    expect([pooledNew.status, pooledNew.json.error_code]).toEqual([400, 'ERR_521']);

    await m.client.endpoints.update(first.id, { pooling_enabled: true });
    const second = await m.client.endpoints.create({
      url: canonical,
      bindings: ['kubernetes'],
      pooling_enabled: true,
    });
    expect(second.url).toBe(canonical);
    const urls = (await listAll()).filter((e) => e.url === canonical);
    expect(urls.map((e) => e.id).sort()).toEqual([first.id, second.id].sort());

    // Turning pooling off while another endpoint shares the URL is a conflict.
    const off = await m.raw('PATCH', `/endpoints/${first.id}`, { body: { pooling_enabled: false } });
    expect([off.status, off.json.error_code]).toEqual([400, 'ERR_520']);
    expect((await m.client.endpoints.get(first.id)).pooling_enabled).toBe(true);

    // Moving an unpooled endpoint onto a pooled URL is a conflict; moving a pooled one is fine.
    const loner = await m.client.endpoints.create({ url: freshUrl(), bindings: ['kubernetes'] });
    const move = await m.raw('PATCH', `/endpoints/${loner.id}`, { body: { url } });
    expect([move.status, move.json.error_code]).toEqual([400, 'ERR_520']);
    const moved = await m.client.endpoints.update(loner.id, { url, pooling_enabled: true });
    expect(moved.url).toBe(canonical);

    // Once the others are gone, pooling can be turned off again.
    await m.client.endpoints.delete(second.id);
    await m.client.endpoints.delete(moved.id);
    expect((await m.client.endpoints.update(first.id, { pooling_enabled: false })).pooling_enabled).toBe(
      false,
    );
  });

  it('reports pooling conflicts through the typed client as an ApiError', async () => {
    const url = freshUrl('tcp', 9000);
    await m.client.endpoints.create({ url, bindings: ['kubernetes'] });
    const err = await m.client.endpoints.create({ url, bindings: ['kubernetes'] }).catch((e: unknown) => e);
    expect(hasErrorCode(err, 'ERR_520')).toBe(true);
  });
});

describe('endpoints: tunnels follow upstreams', () => {
  async function tunnels(client = m.client) {
    return collect(client.tunnels.list());
  }

  it('creates an online tunnel for an upstream, updates it on PATCH, removes it on delete', async () => {
    const ep = await m.client.endpoints.create({
      url: 'http://tun.demo',
      bindings: ['kubernetes'],
      upstream_url: 'http://127.0.0.1:8080',
    });
    expect(ep.type).toBe('agent');
    expect(ep.upstream_url).toBe('http://127.0.0.1:8080');
    expect(ep.tunnel?.id).toMatch(/^tn_/);
    const t1 = (await tunnels()).find((t) => t.id === ep.tunnel!.id);
    expect(t1).toMatchObject({
      endpoint: { id: ep.id, uri: `${m.url}/endpoints/${ep.id}` },
      forwards_to: 'http://127.0.0.1:8080',
      proto: 'http',
      public_url: 'http://tun.demo:80',
      region: 'us',
    });
    expect(t1!.tunnel_session.id).toMatch(/^ts_/);
    expect(t1!.started_at).toMatch(/Z$/);
    expect((await tunnels(m.otherClient)).find((t) => t.id === ep.tunnel!.id)).toBeUndefined();

    // New upstream and URL: the same tunnel, updated in place.
    const moved = await m.client.endpoints.update(ep.id, {
      upstream_url: 'tcp://127.0.0.1:9090',
      url: 'tcp://tun.demo:7000',
    });
    expect(moved.tunnel).toEqual(ep.tunnel);
    const t2 = (await tunnels()).find((t) => t.id === ep.tunnel!.id);
    expect(t2).toMatchObject({
      forwards_to: 'tcp://127.0.0.1:9090',
      proto: 'tcp',
      public_url: 'tcp://tun.demo:7000',
    });

    // null removes the upstream: the tunnel goes offline.
    const plain = await m.client.endpoints.update(ep.id, { upstream_url: null });
    expect(plain).not.toHaveProperty('tunnel');
    expect(plain).not.toHaveProperty('upstream_url');
    expect(plain.type).toBe('cloud');
    expect((await tunnels()).find((t) => t.id === ep.tunnel!.id)).toBeUndefined();

    // Adding one back starts a new tunnel; deleting the endpoint takes it offline.
    const again = await m.client.endpoints.update(ep.id, { upstream_url: 'http://localhost:3000' });
    expect(again.tunnel?.id).toMatch(/^tn_/);
    expect(again.tunnel?.id).not.toBe(ep.tunnel!.id);
    expect((await tunnels()).some((t) => t.id === again.tunnel!.id)).toBe(true);
    await m.client.endpoints.delete(ep.id);
    expect((await tunnels()).some((t) => t.endpoint?.id === ep.id)).toBe(false);
  });

  it('rejects bad upstream URLs with ERR_530 and creates nothing', async () => {
    const before = (await tunnels()).length;
    for (const upstream_url of ['ftp://x:1', 'tcp://127.0.0.1', 'http://a/b', '127.0.0.1:80']) {
      const res = await m.raw('POST', '/endpoints', {
        body: { url: freshUrl(), bindings: ['kubernetes'], upstream_url },
      });
      expect([res.status, res.json.error_code], upstream_url).toEqual([400, 'ERR_530']);
    }
    expect((await tunnels()).length).toBe(before);
  });

  it('does not start a tunnel when the create fails on a pooling conflict', async () => {
    const url = freshUrl();
    await m.client.endpoints.create({ url, bindings: ['kubernetes'] });
    const before = (await tunnels()).length;
    const res = await m.raw('POST', '/endpoints', {
      body: { url, bindings: ['kubernetes'], upstream_url: 'http://127.0.0.1:1' },
    });
    expect(res.json.error_code).toBe('ERR_520');
    expect((await tunnels()).length).toBe(before);
  });
});
