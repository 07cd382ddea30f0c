import { createHash, randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { pipeline } from 'node:stream/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectThroughIngress, IngressError } from '../../src/api/ingress/dialer.js';
import { captureLogs } from '../helpers/logs.js';
import { startMockApi } from '../../src/mock/server.js';
import {
  ACME_AUTHTOKEN,
  GLOBEX_AUTHTOKEN,
  GLOBEX_KEY,
  startTestMock,
  twoAccounts,
  type TestMock,
} from '../helpers/mock-api.js';
import {
  closedPort,
  createEndpoint,
  rawExchange,
  readAll,
  readBytes,
  startEcho,
  startServer,
  waitFor,
  type TestServer,
  startUnresponsiveUpstream,
} from './helpers.js';
import { budget } from '../helpers/budget.js';

async function ingressError(p: Promise<unknown>): Promise<IngressError> {
  const err = await p.then(
    (s) => {
      (s as Socket).destroy();
      return undefined;
    },
    (e: unknown) => e,
  );
  if (!(err instanceof IngressError)) throw new Error(`expected an IngressError, got ${String(err)}`);
  return err;
}

describe('binding ingress (plain, loopback)', () => {
  let t: TestMock;
  let address: string;
  let echo: TestServer;
  let logLines: Record<string, unknown>[] = [];
  let rawLog: string[] = [];

  beforeAll(async () => {
    const logs = captureLogs();
    rawLog = logs.raw;
    logLines = logs.lines;
    t = await startTestMock({ ingress: {}, logger: logs.logger });
    address = t.api.ingressAddress!;
    echo = await startEcho();
    await createEndpoint(t, 'http://echo.default', { upstream_url: echo.upstreamUrl });
  });
  afterAll(async () => {
    await t?.close();
    await echo?.close();
  });

  const dial = (url: string, authtoken = ACME_AUTHTOKEN) =>
    connectThroughIngress({ address, authtoken, url });

  it('exposes its address to operators through MockServices', () => {
    expect(address).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(t.api.services.ingressAddress).toBe(address);
    expect(t.api.ingressCaPem).toBeUndefined();
  });

  it('round-trips bytes to the endpoint upstream (URL canonicalised: no port means :80)', async () => {
    const sock = await connectThroughIngress({
      address,
      authtoken: ACME_AUTHTOKEN,
      url: 'http://echo.default',
      source: { pod: 'client-1', namespace: 'apps', ip: '10.0.0.7' },
    });
    const all = readAll(sock);
    sock.write('hello ');
    sock.end('world');
    expect((await all).toString()).toBe('hello world');
  });

  it('logs one line per connection with account, endpoint, bytes and outcome, never the authtoken', async () => {
    const sock = await dial('http://echo.default:80');
    const all = readAll(sock);
    sock.end('0123456789');
    await all;
    await waitFor(() =>
      logLines.some(
        (l) => l['msg'] === 'ingress connection' && l['bytes_in'] === 10 && l['outcome'] === 'closed',
      ),
    );
    const line = logLines.find((l) => l['msg'] === 'ingress connection' && l['bytes_in'] === 10)!;
    expect(line).toMatchObject({
      account: 'acme',
      url: 'http://echo.default:80',
      bytes_out: 10,
      component: 'ingress',
    });
    expect(String(line['endpoint_id'])).toMatch(/^ep_/);
    await ingressError(dial('http://echo.default:80', 'wrong_token_value'));
    await waitFor(() => logLines.some((l) => l['code'] === 'ERR_710'));
    expect(rawLog.join('')).not.toContain(ACME_AUTHTOKEN);
    expect(rawLog.join('')).not.toContain('wrong_token_value');
  });

  it('keeps bytes sent right behind the preface, before the reply', async () => {
    const preface = JSON.stringify({ v: 1, authtoken: ACME_AUTHTOKEN, url: 'http://echo.default:80' });
    const out = await rawExchange(address, `${preface}\nearly-bytes`, { end: true });
    expect(out).toMatch(/^\{"ok":true,"endpoint_id":"ep_[^"]+"\}\nearly-bytes$/);
  });

  it('ERR_710 for an unknown authtoken', async () => {
    const err = await ingressError(dial('http://echo.default:80', 'not_a_real_token'));
    expect(err.code).toBe('ERR_710');
  });

  it('ERR_720 for an invalid URL, naming the rule', async () => {
    const err = await ingressError(dial('https://echo.default:443'));
    expect(err.code).toBe('ERR_720');
    expect(err.msg).toMatch(/rule 2/);
  });

  it('ERR_721 for a URL without an endpoint in the account', async () => {
    expect((await ingressError(dial('http://nothing.here:80'))).code).toBe('ERR_721');
  });

  it("ERR_721 for another account's endpoint URL; its own authtoken gets through", async () => {
    await createEndpoint(t, 'tcp://globex-only.default:9000', { upstream_url: echo.upstreamUrl }, GLOBEX_KEY);
    expect((await ingressError(dial('tcp://globex-only.default:9000'))).code).toBe('ERR_721');
    const sock = await dial('tcp://globex-only.default:9000', GLOBEX_AUTHTOKEN);
    const all = readAll(sock);
    sock.end('globex');
    expect((await all).toString()).toBe('globex');
  });

  it('ERR_722 for an endpoint without upstream', async () => {
    await createEndpoint(t, 'http://no-upstream.default');
    const err = await ingressError(dial('http://no-upstream.default:80'));
    expect(err.code).toBe('ERR_722');
    expect(err.msg).toMatch(/no upstream_url/);
  });

  it('ERR_730 when the upstream refuses', async () => {
    const port = await closedPort();
    await createEndpoint(t, 'tcp://refused.default:5432', { upstream_url: `tcp://127.0.0.1:${port}` });
    expect((await ingressError(dial('tcp://refused.default:5432'))).code).toBe('ERR_730');
  });

  it.each([
    ['not JSON', 'not json at all\n', 'ERR_700'],
    ['wrong version', '{"v":7,"authtoken":"x","url":"http://a.b"}\n', 'ERR_702'],
    [
      'unknown field',
      `{"v":1,"authtoken":"${ACME_AUTHTOKEN}","url":"http://echo.default","x":1}\n`,
      'ERR_703',
    ],
    ['too long', 'x'.repeat(5000), 'ERR_701'],
  ])('answers a malformed preface (%s) with the right code and closes', async (_label, data, code) => {
    const out = await rawExchange(address, data);
    const reply = JSON.parse(out.split('\n')[0]!) as { ok: boolean; code: string; msg: string };
    expect(reply).toMatchObject({ ok: false, code });
    expect(reply.msg.length).toBeGreaterThan(0);
    expect(out.endsWith('\n')).toBe(true);
  });

  it('half-close: the client ends its write side and still receives what the upstream sends after EOF', async () => {
    const upstream = await startServer((s) => {
      const chunks: Buffer[] = [];
      s.on('data', (c: Buffer) => chunks.push(c));
      s.on('end', () => {
        setTimeout(() => s.end(`got ${Buffer.concat(chunks).toString().toUpperCase()}`), 50);
      });
    });
    try {
      await createEndpoint(t, 'tcp://halfclose-a.default:7000', { upstream_url: upstream.upstreamUrl });
      const sock = await dial('tcp://halfclose-a.default:7000');
      const all = readAll(sock);
      sock.end('request body');
      expect((await all).toString()).toBe('got REQUEST BODY');
    } finally {
      await upstream.close();
    }
  });

  it('half-close: the upstream ends first and still receives what the client sends afterwards', async () => {
    let received: Promise<string> | undefined;
    const upstream = await startServer((s) => {
      received = readAll(s).then((b) => b.toString());
      s.end('banner then EOF');
    });
    try {
      await createEndpoint(t, 'tcp://halfclose-b.default:7001', { upstream_url: upstream.upstreamUrl });
      const sock = await dial('tcp://halfclose-b.default:7001');
      const fromUpstream = await readAll(sock);
      expect(fromUpstream.toString()).toBe('banner then EOF');
      expect(sock.destroyed).toBe(false);
      sock.end('late client data');
      await waitFor(() => received !== undefined);
      expect(await received).toBe('late client data');
    } finally {
      await upstream.close();
    }
  });

  it('works end to end behind a forwarder-like relay using pipeline() both ways (as docs/ingress.md shows)', async () => {
    const upstream = await startServer((s) => {
      const chunks: Buffer[] = [];
      s.on('data', (c: Buffer) => chunks.push(c));
      s.on('end', () => s.end(`relayed ${Buffer.concat(chunks).toString()}`));
    });
    const relay = await startServer((conn) => {
      conn.pause();
      void (async () => {
        try {
          const up = await dial('tcp://relay.default:7100');
          await Promise.allSettled([pipeline(conn, up), pipeline(up, conn)]);
        } catch {
          conn.destroy();
        }
      })();
    });
    try {
      await createEndpoint(t, 'tcp://relay.default:7100', { upstream_url: upstream.upstreamUrl });
      const client = connect({ host: '127.0.0.1', port: relay.port, allowHalfOpen: true });
      const all = readAll(client);
      client.end('through the relay');
      expect((await all).toString()).toBe('relayed through the relay');
    } finally {
      await Promise.all([relay.close(), upstream.close()]);
    }
  });

  it('round-robins across pooled endpoints with the same URL, oldest first', async () => {
    const named = (name: string) => startServer((s) => s.end(name));
    const a = await named('A');
    const b = await named('B');
    try {
      await createEndpoint(t, 'tcp://pool.default:6000', {
        upstream_url: a.upstreamUrl,
        pooling_enabled: true,
      });
      await createEndpoint(t, 'tcp://pool.default:6000', {
        upstream_url: b.upstreamUrl,
        pooling_enabled: true,
      });
      const seen: string[] = [];
      for (let i = 0; i < 4; i++) {
        const sock = await dial('tcp://pool.default:6000');
        const all = readAll(sock);
        sock.end();
        seen.push((await all).toString());
      }
      expect(seen).toEqual(['A', 'B', 'A', 'B']);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('carries 64 MiB intact to an echo upstream and back', { timeout: budget(60_000) }, async () => {
    const total = 64 * 1024 * 1024;
    const chunkSize = 1024 * 1024;
    const sock = await dial('http://echo.default:80');
    const recvHash = createHash('sha256');
    let received = 0;
    const done = new Promise<void>((resolve, reject) => {
      sock.on('data', (c: Buffer) => {
        recvHash.update(c);
        received += c.length;
      });
      sock.once('end', resolve);
      sock.once('error', reject);
    });
    sock.resume();
    const sendHash = createHash('sha256');
    for (let sent = 0; sent < total; sent += chunkSize) {
      const chunk = randomBytes(chunkSize);
      sendHash.update(chunk);
      if (!sock.write(chunk)) await new Promise((r) => sock.once('drain', r));
    }
    sock.end();
    await done;
    expect(received).toBe(total);
    expect(recvHash.digest('hex')).toBe(sendHash.digest('hex'));
  });
});

describe('binding ingress limits and timeouts', () => {
  let t: TestMock;
  let echo: TestServer;

  beforeAll(async () => {
    t = await startTestMock({
      config: {
        ...twoAccounts,
        ingress: {
          preface_timeout_ms: 100,
          max_connections: 2,
          max_connections_per_url: 2,
          idle_timeout_ms: 300,
          dial_timeout_ms: 200,
        },
      },
      ingress: {},
    });
    echo = await startEcho();
    await createEndpoint(t, 'http://echo.default', { upstream_url: echo.upstreamUrl });
  });
  afterAll(async () => {
    await t?.close();
    await echo?.close();
  });

  it('ERR_731 when the upstream does not accept within dial_timeout_ms', async () => {
    const silent = await startUnresponsiveUpstream();
    try {
      await createEndpoint(t, 'tcp://silent.default:5432', {
        upstream_url: `tcp://127.0.0.1:${silent.port}`,
      });
      const err = await ingressError(
        connectThroughIngress({
          address: t.api.ingressAddress!,
          authtoken: ACME_AUTHTOKEN,
          url: 'tcp://silent.default:5432',
        }),
      );
      expect(err.code).toBe('ERR_731');
      expect(err.msg).toContain('200 ms');
    } finally {
      silent.close();
    }
  });

  it('ERR_704 when the preface does not arrive in time', async () => {
    const out = await rawExchange(t.api.ingressAddress!, undefined);
    expect(JSON.parse(out.trim())).toMatchObject({ ok: false, code: 'ERR_704' });
  });

  it('ERR_740 beyond max_connections, and room again once a connection closes', async () => {
    const address = t.api.ingressAddress!;
    const dial = () =>
      connectThroughIngress({ address, authtoken: ACME_AUTHTOKEN, url: 'http://echo.default' });
    const first = await dial();
    const second = await dial();
    try {
      expect((await ingressError(dial())).code).toBe('ERR_740');
      first.destroy();
      let ok: Socket | undefined;
      for (let i = 0; i < 50 && !ok; i++) {
        try {
          ok = await dial();
        } catch (err) {
          if (!(err instanceof IngressError) || err.code !== 'ERR_740') throw err;
          await new Promise((r) => setTimeout(r, 20));
        }
      }
      expect(ok).toBeDefined();
      ok!.destroy();
    } finally {
      first.destroy();
      second.destroy();
    }
  });

  it('closes a piped connection that stays idle past idle_timeout_ms', async () => {
    // The previous test's connections may still be closing: retry while the ingress is full.
    let sock: Socket | undefined;
    for (let i = 0; i < 50 && !sock; i++) {
      try {
        sock = await connectThroughIngress({
          address: t.api.ingressAddress!,
          authtoken: ACME_AUTHTOKEN,
          url: 'http://echo.default',
        });
      } catch (err) {
        if (!(err instanceof IngressError) || err.code !== 'ERR_740') throw err;
        await new Promise((r) => setTimeout(r, 20));
      }
    }
    if (!sock) throw new Error('ingress stayed full');
    sock.write('ping');
    expect((await readBytes(sock, 4)).toString()).toBe('ping');
    // Nothing more is sent: the ingress must close the connection by itself (bounded wait).
    await readAll(sock, 10_000);
    expect(sock.readableEnded || sock.destroyed).toBe(true);
  });
});

describe('binding ingress over TLS', () => {
  let t: TestMock;
  let echo: TestServer;

  beforeAll(async () => {
    t = await startTestMock({ config: { ...twoAccounts, ingress: { tls: true } }, ingress: {} });
    echo = await startEcho();
    await createEndpoint(t, 'tcp://secure.default:443', { upstream_url: echo.upstreamUrl });
  });
  afterAll(async () => {
    await t?.close();
    await echo?.close();
  });

  it('round-trips with the development CA, half-close included', async () => {
    expect(t.api.ingressCaPem).toMatch(/BEGIN CERTIFICATE/);
    const sock = await connectThroughIngress({
      address: t.api.ingressAddress!,
      authtoken: ACME_AUTHTOKEN,
      url: 'tcp://secure.default:443',
      tls: { ca: t.api.ingressCaPem! },
    });
    const all = readAll(sock);
    sock.end('over tls');
    expect((await all).toString()).toBe('over tls');
  });

  it('respects half-close over TLS when the upstream ends first', async () => {
    let received: Promise<string> | undefined;
    const upstream = await startServer((s) => {
      received = readAll(s).then((b) => b.toString());
      s.end('tls banner');
    });
    try {
      await createEndpoint(t, 'tcp://secure-half.default:443', { upstream_url: upstream.upstreamUrl });
      const sock = await connectThroughIngress({
        address: t.api.ingressAddress!,
        authtoken: ACME_AUTHTOKEN,
        url: 'tcp://secure-half.default:443',
        tls: { ca: t.api.ingressCaPem! },
      });
      expect((await readAll(sock)).toString()).toBe('tls banner');
      sock.end('after the banner');
      await waitFor(() => received !== undefined);
      expect(await received).toBe('after the banner');
    } finally {
      await upstream.close();
    }
  });

  it('verifies the certificate by name too (localhost)', async () => {
    const port = t.api.ingressAddress!.split(':')[1]!;
    const sock = await connectThroughIngress({
      address: `localhost:${port}`,
      authtoken: ACME_AUTHTOKEN,
      url: 'tcp://secure.default:443',
      tls: { ca: t.api.ingressCaPem! },
    });
    sock.destroy();
  });

  it('fails with ERR_795 (a refused certificate) when the CA is not trusted', async () => {
    const err = await ingressError(
      connectThroughIngress({
        address: t.api.ingressAddress!,
        authtoken: ACME_AUTHTOKEN,
        url: 'tcp://secure.default:443',
        tls: {},
      }),
    );
    expect(err.code).toBe('ERR_795');
  });
});

describe('binding ingress listen rules', () => {
  it('refuses plain TCP on a non-loopback host, saying why', async () => {
    await expect(startMockApi({ config: twoAccounts, ingress: { host: '0.0.0.0' } })).rejects.toThrow(
      /only on a loopback address/,
    );
  });
});

describe('binding ingress shutdown', () => {
  it('stop() closes live piped connections and the listener', async () => {
    const t = await startTestMock({ ingress: {} });
    const echo = await startEcho();
    try {
      await createEndpoint(t, 'http://echo.default', { upstream_url: echo.upstreamUrl });
      const address = t.api.ingressAddress!;
      const sock = await connectThroughIngress({
        address,
        authtoken: ACME_AUTHTOKEN,
        url: 'http://echo.default',
      });
      const ended = readAll(sock, 10_000);
      await t.close();
      await ended;
      expect(sock.readableEnded || sock.destroyed).toBe(true);
      const err = await ingressError(
        connectThroughIngress({ address, authtoken: ACME_AUTHTOKEN, url: 'http://echo.default' }),
      );
      expect(err.code).toBe('ERR_793');
    } finally {
      await echo.close();
    }
  });
});
