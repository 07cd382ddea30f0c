import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ApiError,
  ApiOriginError,
  ApiTimeoutError,
  ManagementClient,
  collect,
  hasErrorCode,
  isNotFound,
} from '../../src/api/client/index.js';
import { captureLogs } from '../helpers/logs.js';
import { ACME_KEY, startTestMock, type TestMock } from '../helpers/mock-api.js';

let m: TestMock;
beforeAll(async () => {
  m = await startTestMock();
});
afterAll(async () => {
  await m.close();
});

function clientWith(opts: Partial<ConstructorParameters<typeof ManagementClient>[0]> = {}): ManagementClient {
  return new ManagementClient({
    baseUrl: m.url,
    apiKey: m.key,
    retry: { initialMs: 1, maxMs: 5 },
    ...opts,
  });
}

async function inject(fault: Record<string, unknown>): Promise<void> {
  const res = await m.admin('POST', '/admin/faults', fault);
  expect(res.status).toBe(201);
}

describe('ManagementClient errors', () => {
  it('throws an ApiError (a real Error) with the server fields', async () => {
    const err = await m.client.ipPolicies.get('ipp_00000000000000000000000000').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect(err).toBeInstanceOf(ApiError);
    const e = err as ApiError;
    expect(e.status).toBe(404);
    expect(e.errorCode).toBe('ERR_150');
    expect(e.operationId).toMatch(/^op_/);
    expect(e.details['operation_id']).toBe(e.operationId);
    expect(e.message).toContain('HTTP 404');
    expect(isNotFound(new Error('wrapped', { cause: e }))).toBe(true);
    expect(hasErrorCode(e, 'ERR_150')).toBe(true);
    expect(hasErrorCode(e, 'ERR_151')).toBe(false);
  });

  it('turns a non-JSON error page into a useful ApiError', async () => {
    await inject({ status: 502, html: true, count: 1 });
    const client = clientWith({ retry: { retries: 0 } });
    const err = (await client.ipPolicies.create({}).catch((e: unknown) => e)) as ApiError;
    expect(err).toBeInstanceOf(ApiError);
    expect(err.status).toBe(502);
    expect(err.errorCode).toBeUndefined();
    expect(err.msg).toContain('502');
    expect(err.rawBody).toContain('<html>');
    expect(err.operationId).toMatch(/^op_/); // salvaged from the header
    await client.close();
  });
});

describe('ManagementClient retries', () => {
  it('retries an idempotent call on 429, honouring Retry-After, and on 503', async () => {
    await inject({ status: 429, count: 1, retry_after_seconds: 0, path_prefix: '/ip_policies' });
    await inject({ status: 503, count: 1, path_prefix: '/ip_policies' });
    const logs = captureLogs();
    const client = clientWith({ logger: logs.logger });
    const list = await collect(client.ipPolicies.list());
    expect(Array.isArray(list)).toBe(true);
    expect(logs.count('api request retry')).toBe(2);
    await client.close();
  });

  it('gives up after the configured retries with the last error', async () => {
    await inject({ status: 500, count: 3, path_prefix: '/ip_policies' });
    const client = clientWith({ retry: { retries: 2, initialMs: 1, maxMs: 2 } });
    const err = (await collect(client.ipPolicies.list()).catch((e: unknown) => e)) as ApiError;
    expect(err).toBeInstanceOf(ApiError);
    expect(err.status).toBe(500);
    // All three injected faults were used up by the first attempt and two retries: the next call succeeds.
    await expect(collect(client.ipPolicies.list())).resolves.toBeDefined();
    await client.close();
  });

  it('does not retry a non-idempotent call', async () => {
    await inject({ status: 503, count: 1, path_prefix: '/ip_policies' });
    const client = clientWith();
    const before = (await collect(client.ipPolicies.list())).length;
    await inject({ status: 503, count: 1, path_prefix: '/ip_policies' });
    const err = (await client.ipPolicies.create({}).catch((e: unknown) => e)) as ApiError;
    expect(err.status).toBe(503);
    expect((await collect(client.ipPolicies.list())).length).toBe(before);
    await client.close();
  });

  it('fails at once when Retry-After is longer than it agrees to wait', async () => {
    await inject({ status: 429, count: 1, retry_after_seconds: 3600, path_prefix: '/ip_policies' });
    const client = clientWith({ retry: { retries: 3, maxRetryAfterMs: 1000 } });
    const err = (await collect(client.ipPolicies.list()).catch((e: unknown) => e)) as ApiError;
    expect(err.status).toBe(429);
    expect(err.errorCode).toBe('ERR_160');
    await m.admin('DELETE', '/admin/faults');
    await client.close();
  });
});

describe('ManagementClient timeouts and cancellation', () => {
  it('times out a call that gets no answer', async () => {
    await inject({ status: 503, hang: true, count: 1, path_prefix: '/ip_policies' });
    const client = clientWith({ timeoutMs: 200, retry: { retries: 0 } });
    await expect(client.ipPolicies.create({})).rejects.toBeInstanceOf(ApiTimeoutError);
    await client.close();
  });

  it('retries a timed-out idempotent call', async () => {
    await inject({ status: 503, hang: true, count: 1, path_prefix: '/ip_policies' });
    const logs = captureLogs();
    const client = clientWith({
      timeoutMs: 200,
      logger: logs.logger,
      retry: { retries: 1, initialMs: 1, maxMs: 1 },
    });
    await expect(collect(client.ipPolicies.list())).resolves.toBeDefined();
    expect(logs.count('api request retry')).toBe(1);
    await client.close();
  });

  it('stops when the caller aborts', async () => {
    await inject({ status: 503, hang: true, count: 1, path_prefix: '/ip_policies' });
    const client = clientWith({ timeoutMs: 30_000 });
    const ac = new AbortController();
    const pending = client.ipPolicies.create({}, { signal: ac.signal });
    setTimeout(() => ac.abort(), 50);
    const err = await pending.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect(err).not.toBeInstanceOf(ApiTimeoutError);
    expect(ac.signal.aborted).toBe(true);
    await client.close();
  });
});

describe('ManagementClient paging', () => {
  it('is lazy: nothing is requested before the first next()', async () => {
    await inject({ status: 500, count: 1, path_prefix: '/ip_policies' });
    const client = clientWith({ retry: { retries: 0 } });
    const iter = client.ipPolicies.list();
    // The fault is still pending, so a request made now would fail; creating an iterator made none.
    await expect(iter.next()).rejects.toBeInstanceOf(ApiError);
    await client.close();
  });

  it('follows a next_page_uri on its own origin, and refuses one on another origin or with user information', async () => {
    // A fake API whose first page names `nextUri`, and a recording server standing in for the
    // foreign origin a poisoned next_page_uri points at.
    const seenApi: string[] = [];
    const seenForeign: string[] = [];
    let nextUri = '';
    const policy = (n: number) => ({
      id: `ipp_0000000000000000000000000${n}`,
      uri: `x/${n}`,
      created_at: '2026-01-01T00:00:00Z',
    });
    const api: Server = createServer((req, res) => {
      seenApi.push(req.url ?? '');
      const first = !(req.url ?? '').includes('before_id');
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          ip_policies: [policy(first ? 1 : 2)],
          uri: 'x',
          next_page_uri: first ? nextUri : null,
        }),
      );
    });
    const foreign: Server = createServer((req, res) => {
      seenForeign.push(`${req.url ?? ''} ${req.headers.authorization ?? ''}`);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"ip_policies":[],"uri":"x","next_page_uri":null}');
    });
    const listenOn = async (srv: Server) => {
      await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
      return (srv.address() as AddressInfo).port;
    };
    const apiPort = await listenOn(api);
    const foreignPort = await listenOn(foreign);
    const client = new ManagementClient({
      baseUrl: `http://127.0.0.1:${apiPort}`,
      apiKey: ACME_KEY,
      retry: { retries: 0 },
    });
    const listAll = () => collect(client.ipPolicies.list({ limit: 1 }));
    try {
      nextUri = `http://127.0.0.1:${apiPort}/ip_policies?limit=1&before_id=ipp_1`;
      expect((await listAll()).map((p) => p.id)).toEqual([policy(1).id, policy(2).id]);
      expect(seenApi).toHaveLength(2);

      for (const poisoned of [
        `http://127.0.0.1:${foreignPort}/ip_policies?limit=1&before_id=ipp_1`, // another port
        `http://localhost:${apiPort}/ip_policies?limit=1&before_id=ipp_1`, // another host name
        `https://127.0.0.1:${apiPort}/ip_policies?limit=1&before_id=ipp_1`, // another scheme
        `http://evil@127.0.0.1:${apiPort}/ip_policies?limit=1&before_id=ipp_1`, // user information
      ]) {
        nextUri = poisoned;
        seenApi.length = 0;
        const err = await listAll().catch((e: unknown) => e);
        expect(err, poisoned).toBeInstanceOf(ApiOriginError);
        expect((err as ApiOriginError).expectedOrigin).toBe(`http://127.0.0.1:${apiPort}`);
        expect((err as Error).message).toContain('refusing to follow');
        expect((err as Error).message).not.toContain('evil@');
        expect(seenApi).toHaveLength(1); // only the first page was fetched
      }
      expect(seenForeign).toEqual([]); // the key never left for the other origin
    } finally {
      await client.close();
      for (const srv of [api, foreign]) {
        srv.closeAllConnections();
        await new Promise<void>((r) => srv.close(() => r()));
      }
    }
  });
});

describe('secrets stay out of logs', () => {
  it('never writes the API key in client or mock logs', async () => {
    const { logger, raw: lines } = captureLogs('trace');
    const mock = await startTestMock({ logger });
    try {
      const client = new ManagementClient({
        baseUrl: mock.url,
        apiKey: ACME_KEY,
        logger,
        retry: { retries: 0 },
      });
      await client.ipPolicies.create({ description: 'x' });
      await collect(client.ipPolicies.list());
      await mock.raw('GET', '/ip_policies', { apiKey: 'wrong-key-abcdef' });
      logger.info(
        {
          apiKey: ACME_KEY,
          config: { authtoken: 'tok-secret-1' },
          req: { headers: { authorization: 'Bearer x' } },
        },
        'probe',
      );
      await client.close();
    } finally {
      await mock.close();
    }
    const text = lines.join('');
    expect(text).toContain('mock api request');
    expect(text).toContain('api request');
    expect(text).not.toContain(ACME_KEY);
    expect(text).not.toContain('wrong-key-abcdef');
    expect(text).not.toContain('tok-secret-1');
    expect(text).not.toContain('Bearer');
    expect(text).toContain('[redacted]');
  });
});
