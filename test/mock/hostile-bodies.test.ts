import type { Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { startTestMock, twoAccounts, type TestMock } from '../helpers/mock-api.js';
import { openSocket, parseRawResponse, rawHttp, readUntilClosed } from './raw-http.js';
import { conditionOf, pollUntil } from '../helpers/wait.js';

let m: TestMock;
beforeAll(async () => {
  m = await startTestMock();
});
afterAll(async () => {
  await m.close();
});

/** POST/PUT/PATCH with these exact body bytes. */
async function sendBytes(
  method: 'POST' | 'PUT' | 'PATCH',
  path: string,
  body: Buffer,
  contentType = 'application/json',
) {
  const res = await request(m.url + path, {
    method,
    headers: { authorization: `Bearer ${m.key}`, 'service-version': '2', 'content-type': contentType },
    body,
  });
  const text = await res.body.text();
  return { status: res.statusCode, json: text ? JSON.parse(text) : undefined };
}

async function expectServerAlive(): Promise<void> {
  const res = await m.raw('GET', '/ip_policies?limit=1');
  expect(res.status).toBe(200);
}

async function newRoute() {
  const edge = await m.client.httpsEdges.create();
  const route = await m.client.httpsEdgeRoutes.create(edge.id, { match_type: 'path_prefix', match: '/' });
  return { edge, route, path: `/edges/https/${edge.id}/routes/${route.id}/traffic_policy` };
}

describe('traffic policy documents are bounded before any parser runs', () => {
  it('refuses a megabyte of "[" (under the body cap) with a 400 naming the field, in parallel, and keeps serving', async () => {
    const { path } = await newRoute();
    const value = '['.repeat(1_000_000);
    const results = await Promise.all(
      Array.from({ length: 4 }, () => m.raw('PUT', path, { body: { value } })),
    );
    for (const res of results) {
      expect([res.status, res.json.error_code, res.json.details.field]).toEqual([
        400,
        'ERR_394',
        'body.value',
      ]);
      expect(res.json.msg).toContain('65536');
    }
    await expectServerAlive();
  });

  it.each([
    ['60 000 "{"', '{'.repeat(60_000)],
    ['30 000 compact "- "', '- '.repeat(30_000)],
    ['30 000 "? "', '? '.repeat(30_000)],
    ['"[" hidden behind "]" in quotes', '[ "]" '.repeat(5_000)],
    [
      '300 ever deeper block mappings',
      Array.from({ length: 300 }, (_, i) => `${' '.repeat(i)}k:`).join('\n'),
    ],
  ])('refuses %s (under the size cap) as too deeply nested', async (_name, value) => {
    const { edge, route, path } = await newRoute();
    const res = await m.raw('PUT', path, { body: { value } });
    expect([res.status, res.json.error_code, res.json.details.field]).toEqual([400, 'ERR_394', 'body.value']);
    expect(res.json.msg).toContain('nests deeper than 64 levels');
    expect((await m.client.httpsEdgeRoutes.get(edge.id, route.id)).traffic_policy).toBeNull();
    await expectServerAlive();
  });

  it('still accepts ordinary YAML and JSON policies, brackets in quoted strings and block scalars included', async () => {
    const { edge, route } = await newRoute();
    const api = m.client.httpsEdgeRoutes.modules.trafficPolicy;
    for (const value of [
      'on_http_request:\n  - expressions: ["req.url.path.startsWith(\'/[[[[[[[[\')"]\n    actions:\n      - type: custom-response\n        config:\n          status_code: 200\n          headers: {a: "[[[", b: c}\n          body: |\n            ' +
        '['.repeat(200) +
        '\n',
      JSON.stringify({ on_http_request: [{ actions: [{ type: 'deny', config: { status_code: 403 } }] }] }),
    ]) {
      expect(await api.replace(edge.id, route.id, { value })).toEqual({ enabled: true, value });
    }
  });
});

describe('request bodies', () => {
  it('refuses JSON nested deeper than 32 levels, also a megabyte of it, and keeps serving', async () => {
    const deep = (n: number) => `{"description":"x","metadata":${'['.repeat(n)}${']'.repeat(n)}}`;
    const ok = await m.raw('POST', '/ip_policies', { rawBody: deep(31) });
    expect([ok.status, ok.json.error_code]).toEqual([400, 'ERR_121']); // nested fine; metadata is no list
    const res = await m.raw('POST', '/ip_policies', { rawBody: deep(33) });
    expect([res.status, res.json.error_code]).toEqual([400, 'ERR_115']);
    expect(res.json.msg).toContain('32');
    const huge = await m.raw('POST', '/ip_policies', { rawBody: '['.repeat(1_000_000) });
    expect([huge.status, huge.json.error_code]).toEqual([400, 'ERR_115']);
    // Brackets inside strings are text, not nesting.
    const quoted = await m.client.ipPolicies.create({ description: '['.repeat(200) });
    expect(quoted.description).toBe('['.repeat(200));
    await expectServerAlive();
  });

  it.each([
    ['a 0xff byte', Buffer.concat([Buffer.from('{"description":"'), Buffer.from([0xff]), Buffer.from('"}')])],
    [
      'a UTF-8-encoded lone surrogate',
      Buffer.concat([Buffer.from('{"description":"'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('"}')]),
    ],
    ['Latin-1 text', Buffer.from('{"description":"café"}', 'latin1')],
  ])('refuses a body with %s as not UTF-8 and stores nothing', async (_name, body) => {
    const before = (await m.raw('GET', '/ip_policies')).json.ip_policies.length;
    const res = await sendBytes('POST', '/ip_policies', body);
    expect([res.status, res.json.error_code]).toEqual([400, 'ERR_117']);
    expect((await m.raw('GET', '/ip_policies')).json.ip_policies.length).toBe(before);
  });

  it('refuses a lone surrogate escape, naming the field', async () => {
    const res = await m.raw('POST', '/ip_policies', { rawBody: '{"description":"a\\ud800b"}' });
    expect([res.status, res.json.error_code, res.json.details.field]).toEqual([
      400,
      'ERR_117',
      'body.description',
    ]);
    const pair = await m.raw('POST', '/ip_policies', { rawBody: '{"description":"\\ud83d\\ude00"}' });
    expect([pair.status, pair.json.description]).toEqual([201, '😀']);
  });

  it('refuses a charset other than UTF-8 and accepts charset=utf-8', async () => {
    const body = Buffer.from('{"description":"x"}');
    const latin = await sendBytes('POST', '/ip_policies', body, 'application/json; charset=latin1');
    expect([latin.status, latin.json.error_code]).toEqual([400, 'ERR_110']);
    expect(latin.json.msg).toContain('latin1');
    const utf8 = await sendBytes('POST', '/ip_policies', body, 'application/json; charset="UTF-8"');
    expect(utf8.status).toBe(201);
  });

  it('refuses a "__proto__" key in a header map instead of silently dropping it', async () => {
    const { edge, route } = await newRoute();
    const res = await m.raw('PUT', `/edges/https/${edge.id}/routes/${route.id}/request_headers`, {
      rawBody: '{"add":{"X-A":"1","__proto__":"2"}}',
    });
    expect([res.status, res.json.error_code, res.json.details.field]).toEqual([
      400,
      'ERR_121',
      'body.add["__proto__"]',
    ]);
    expect((await m.client.httpsEdgeRoutes.get(edge.id, route.id)).request_headers).toBeNull();
  });

  it('refuses a "__proto__" label on an admin tunnel', async () => {
    const res = await rawHttp(
      m.adminUrl,
      [
        'POST /admin/accounts/acme/tunnels HTTP/1.1',
        `Host: ${new URL(m.adminUrl).host}`,
        'Content-Type: application/json',
      ],
      '{"forwards_to":"http://localhost:80","labels":{"app":"x","__proto__":"y"}}',
    );
    expect([res.status, res.json.error_code, res.json.details.field]).toEqual([
      400,
      'ERR_121',
      'body.labels["__proto__"]',
    ]);
    expect((await m.client.tunnels.list().next()).done).toBe(true);
  });
});

describe('a body that never finishes', () => {
  it('gets a 408 with the error body after body_timeout_ms, and the connection is closed', async () => {
    const slow = await startTestMock({ config: { ...twoAccounts, body_timeout_ms: 300 } });
    try {
      const socket = await openSocket(slow.url);
      const closed = readUntilClosed(socket);
      socket.write(
        `POST /ip_policies HTTP/1.1\r\nHost: ${new URL(slow.url).host}\r\nAuthorization: Bearer ${slow.key}\r\n` +
          'Service-Version: 2\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"descr',
      );
      const res = parseRawResponse(await closed);
      expect([res.status, res.json.error_code, res.json.status_code]).toEqual([408, 'ERR_116', 408]);
      expect(res.json.details.operation_id).toMatch(/^op_/);
      expect(res.headers['connection']).toBe('close');
      expect((await slow.raw('GET', '/ip_policies')).json.ip_policies).toEqual([]);
    } finally {
      await slow.close();
    }
  });
});

describe('errors before the body ended', () => {
  it('close the connection instead of waiting for the rest of the body', async () => {
    const socket = await openSocket(m.url);
    const closed = readUntilClosed(socket);
    socket.write(
      `POST /ip_policies HTTP/1.1\r\nHost: ${new URL(m.url).host}\r\nAuthorization: Bearer wrong-key-123456\r\n` +
        'Service-Version: 2\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"de',
    );
    const res = parseRawResponse(await closed);
    expect([res.status, res.json.error_code, res.headers['connection']]).toEqual([403, 'ERR_104', 'close']);
  });
});

describe('connections', () => {
  it('accepts at most max_connections at once, and serves again once one closes', async () => {
    const capped = await startTestMock({ config: { ...twoAccounts, max_connections: 2 } });
    const sockets: Socket[] = [];
    try {
      const hello = `GET /ip_policies HTTP/1.1\r\nHost: ${new URL(capped.url).host}\r\nAuthorization: Bearer ${capped.key}\r\nService-Version: 2\r\n\r\n`;
      // Two kept-alive connections that have each been answered: the server has counted both.
      for (let i = 0; i < 2; i++) {
        const s = await openSocket(capped.url);
        sockets.push(s);
        const answered = new Promise<string>((resolve) =>
          s.once('data', (c: Buffer) => resolve(c.toString())),
        );
        s.write(hello);
        expect(await answered).toMatch(/^HTTP\/1\.1 200/);
      }
      const third = await openSocket(capped.url);
      const got = await readUntilClosed(third); // dropped without an answer
      expect(got.length).toBe(0);
      sockets.pop()!.destroy();
      await eventually(
        async () => (await capped.raw('GET', '/ip_policies').catch(() => undefined))?.status === 200,
      );
    } finally {
      for (const s of sockets) s.destroy();
      await capped.close();
    }
  });
});

async function eventually(check: () => Promise<boolean>, tries = 200): Promise<void> {
  await pollUntil(conditionOf(check), check, (v) => v, {
    timeoutMs: tries * 25,
    intervalMs: 25,
    onError: 'throw',
  });
}
