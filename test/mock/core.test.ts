import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACME_AUTHTOKEN, startTestMock, type TestMock } from '../helpers/mock-api.js';
import { budget } from '../helpers/budget.js';

let m: TestMock;
beforeAll(async () => {
  m = await startTestMock();
});
afterAll(async () => {
  await m.close();
});

function expectError(
  res: { status: number; json: any; headers: Record<string, unknown> },
  status: number,
  code: string,
) {
  expect(res.status).toBe(status);
  expect(res.json.error_code).toBe(code);
  expect(res.json.status_code).toBe(status);
  expect(typeof res.json.msg).toBe('string');
  expect(res.json.details.operation_id).toMatch(/^op_[0-9a-z]{26}$/);
  expect(res.headers['operation-id']).toBe(res.json.details.operation_id);
}

async function policyCount(): Promise<number> {
  const res = await m.raw('GET', '/ip_policies');
  return res.json.ip_policies.length;
}

describe('version header', () => {
  it('is required', async () => {
    expectError(await m.raw('GET', '/ip_policies', { version: null }), 400, 'ERR_100');
  });
  it('must be 2', async () => {
    const res = await m.raw('GET', '/ip_policies', { version: '3' });
    expectError(res, 400, 'ERR_101');
    expect(res.json.msg).toContain('2');
  });
});

describe('authentication', () => {
  it('answers 403 without an Authorization header', async () => {
    expectError(await m.raw('GET', '/ip_policies', { apiKey: null }), 403, 'ERR_102');
  });
  it('answers 403 for a header that is not Bearer', async () => {
    expectError(
      await m.raw('GET', '/ip_policies', { apiKey: null, headers: { authorization: `Basic ${m.key}` } }),
      403,
      'ERR_103',
    );
  });
  it('answers 403 for an unknown key and never echoes it', async () => {
    const res = await m.raw('GET', '/ip_policies', { apiKey: 'not-a-real-key-12345' });
    expectError(res, 403, 'ERR_104');
    expect(res.text).not.toContain('not-a-real-key-12345');
  });
  it('tells an authtoken apart from an API key', async () => {
    expectError(await m.raw('GET', '/ip_policies', { apiKey: ACME_AUTHTOKEN }), 403, 'ERR_105');
  });
});

describe('routing', () => {
  it('answers 404 with the path for an unknown path', async () => {
    const res = await m.raw('GET', '/no/such/thing');
    expectError(res, 404, 'ERR_151');
    expect(res.json.details.path).toBe('/no/such/thing');
  });
  it('answers 405 with Allow for a wrong method', async () => {
    const res = await m.raw('PUT', '/ip_policies', { body: {} });
    expectError(res, 405, 'ERR_152');
    expect(String(res.headers['allow'])).toContain('GET');
  });
  it('rejects an id with the wrong prefix as 400, not 404', async () => {
    expectError(await m.raw('GET', '/ip_policies/edghts_123'), 400, 'ERR_140');
  });
  it('answers 404 for a well-formed id that does not exist', async () => {
    expectError(await m.raw('GET', '/ip_policies/ipp_01m7z9b96fchmj62q07skyrtc6'), 404, 'ERR_150');
  });
});

describe('request bodies', () => {
  it('requires a JSON content type', async () => {
    const before = await policyCount();
    expectError(
      await m.raw('POST', '/ip_policies', { rawBody: '{}', contentType: 'text/plain' }),
      400,
      'ERR_110',
    );
    expectError(
      await m.raw('POST', '/ip_policies', { rawBody: '{"description":"x"}', contentType: null }),
      400,
      'ERR_110',
    );
    expect(await policyCount()).toBe(before);
  });
  it('rejects invalid JSON', async () => {
    expectError(await m.raw('POST', '/ip_policies', { rawBody: '{"description":' }), 400, 'ERR_111');
  });
  it('rejects a JSON body that is not an object', async () => {
    expectError(await m.raw('POST', '/ip_policies', { rawBody: '["a"]' }), 400, 'ERR_114');
  });
  it('rejects a body on GET and DELETE', async () => {
    expectError(await m.raw('GET', '/ip_policies', { body: { a: 1 } }), 400, 'ERR_113');
  });
  it('caps the body size with 413', async () => {
    const before = await policyCount();
    const res = await m.raw('POST', '/ip_policies', { body: { description: 'x'.repeat(2 * 1024 * 1024) } });
    expectError(res, 413, 'ERR_112');
    expect(await policyCount()).toBe(before);
  });
  it('rejects unknown fields, naming them', async () => {
    const before = await policyCount();
    const res = await m.raw('POST', '/ip_policies', { body: { description: 'a', action: 'allow' } });
    expectError(res, 400, 'ERR_120');
    expect(res.json.msg).toContain('action');
    expect(await policyCount()).toBe(before);
  });
  it('rejects values of the wrong type, naming the field', async () => {
    const res = await m.raw('POST', '/ip_policies', { body: { description: 5 } });
    expectError(res, 400, 'ERR_121');
    expect(res.json.msg).toContain('description');
  });
});

describe('query strings', () => {
  it('rejects unknown query parameters', async () => {
    const res = await m.raw('GET', '/ip_policies?sort=asc');
    expectError(res, 400, 'ERR_130');
    expect(res.json.msg).toContain('sort');
  });
  it('rejects repeated parameters', async () => {
    expectError(await m.raw('GET', '/ip_policies?limit=1&limit=2'), 400, 'ERR_131');
  });
  it.each(['0', '101', '-1', 'abc', '1.5', ''])('rejects limit=%s', async (limit) => {
    expectError(await m.raw('GET', `/ip_policies?limit=${limit}`), 400, 'ERR_132');
  });
  it('rejects a before_id of another resource', async () => {
    expectError(await m.raw('GET', '/ip_policies?before_id=tn_abc'), 400, 'ERR_133');
  });
  it('rejects query parameters on operations that take none', async () => {
    const created = await m.client.ipPolicies.create({});
    expectError(await m.raw('GET', `/ip_policies/${created.id}?limit=1`), 400, 'ERR_130');
  });
});

describe('rate limit', () => {
  it('answers 429 with Retry-After once the window is full, per account', async () => {
    const limited = await startTestMock({
      config: {
        accounts: [
          { id: 'a', api_keys: ['key-a-123456'] },
          { id: 'b', api_keys: ['key-b-123456'] },
        ],
        rate_limit: { requests: 3, window_seconds: 60 },
      },
    });
    try {
      for (let i = 0; i < 3; i++)
        expect((await limited.raw('GET', '/ip_policies', { apiKey: 'key-a-123456' })).status).toBe(200);
      const res = await limited.raw('GET', '/ip_policies', { apiKey: 'key-a-123456' });
      expectError(res, 429, 'ERR_160');
      const retryAfter = Number(res.headers['retry-after']);
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect((await limited.raw('GET', '/ip_policies', { apiKey: 'key-b-123456' })).status).toBe(200);
    } finally {
      await limited.close();
    }
  });
});

describe('graceful shutdown', () => {
  it(
    'closes idle keep-alive and never-used connections at once instead of waiting out the grace period',
    { timeout: budget(10_000) },
    async () => {
      const other = await startTestMock({ shutdownGraceMs: 60_000 });
      await other.client.ipPolicies.create({}); // leaves a pooled keep-alive connection
      const { port } = new URL(other.url);
      const silent = connect(Number(port), '127.0.0.1'); // connected, never sends a request
      await new Promise<void>((resolve) => silent.once('connect', () => resolve()));
      const closed = new Promise<void>((resolve) => silent.once('close', () => resolve()));
      await other.close(); // would take 60 s (and time the test out) if idle sockets were waited for
      await closed;
    },
  );

  it('cuts a request still unanswered when the grace period ends', { timeout: budget(10_000) }, async () => {
    const other = await startTestMock({ shutdownGraceMs: 100 });
    await other.admin('POST', '/admin/faults', { status: 503, hang: true });
    const pending = other.raw('GET', '/ip_policies').catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 50));
    await other.close();
    expect(await pending).toBeInstanceOf(Error);
  });

  it('stops listening after stop()', async () => {
    const other = await startTestMock();
    const url = other.url;
    await other.close();
    await expect(fetch(`${url}/ip_policies`)).rejects.toThrow();
  });
});
