import { budget } from '../helpers/budget.js';
import { createHash, randomBytes } from 'node:crypto';
import { constants, type ClientHttp2Stream } from 'node:http2';
import type { Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { IngressV2Pool } from '../../src/api/ingress/v2-dialer.js';
import { IngressError } from '../../src/api/ingress/dialer.js';
import { TOKEN_CHECK_URL } from '../../src/forwarder/ingress-credentials.js';
import { ACME_AUTHTOKEN, startTestMock, type TestMock } from '../helpers/mock-api.js';
import {
  createEndpoint,
  fiftyEchoTransfers,
  startEcho,
  startServer,
  waitFor,
  type TestServer,
} from './helpers.js';

interface Setup {
  mock: TestMock;
  pool: IngressV2Pool;
}

/** How a stream ended on the client side: a clean END_STREAM, or a reset (with its code). */
function ending(s: ClientHttp2Stream): Promise<{ data: Buffer; how: string }> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let ended = false;
    s.on('data', (c: Buffer) => chunks.push(c));
    s.on('end', () => (ended = true));
    s.on('error', () => undefined);
    s.on('close', () =>
      resolve({ data: Buffer.concat(chunks), how: ended && s.rstCode === 0 ? 'end' : `reset ${s.rstCode}` }),
    );
  });
}

/**
 * Binding ingress protocol v2 (#27 item 5): forwarded connections as HTTP/2 CONNECT streams over a
 * few long-lived sessions, against the mock ingress over TLS (ALPN h2) and h2c on loopback.
 */
describe.each([false, true])('ingress v2 (tls %s)', (tls) => {
  const cleanup: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const f of cleanup.splice(0).reverse()) await f();
  });

  async function setup(
    ingress: Record<string, unknown> = {},
    maxSessions = 2,
    windowBytes?: number,
  ): Promise<Setup> {
    const mock = await startTestMock({
      ingress: {},
      config: {
        accounts: [{ id: 'acme', api_keys: ['acme_api_key_0123456789'], authtokens: [ACME_AUTHTOKEN] }],
        ingress: { ...(tls ? { tls: true } : {}), ...ingress },
      },
    });
    const pool = new IngressV2Pool({
      address: mock.api.ingressAddress!,
      ...(tls ? { tls: { ca: mock.api.ingressCaPem! } } : {}),
      maxSessions,
      ...(windowBytes ? { windowBytes } : {}),
    });
    cleanup.push(
      () => mock.close(),
      () => pool.destroy(),
    );
    return { mock, pool };
  }

  async function upstream(onConn: (s: Socket) => void): Promise<TestServer> {
    const u = await startServer(onConn);
    cleanup.push(() => u.close());
    return u;
  }

  const open = (pool: IngressV2Pool, url: string) =>
    pool.open({ authtoken: ACME_AUTHTOKEN, url, timeoutMs: 10_000 });

  it('carries a stream with half-close in both directions', async () => {
    const { mock, pool } = await setup();
    // The upstream answers only after the client's half-close, then ends its side.
    const u = await upstream((s) => {
      let got = '';
      s.on('data', (c: Buffer) => (got += c.toString()));
      s.on('end', () => s.end(`got ${got} after your FIN`));
    });
    await createEndpoint(mock, 'tcp://hc.x:7900', { upstream_url: u.upstreamUrl });
    const s = await open(pool, 'tcp://hc.x:7900');
    const result = ending(s);
    s.end('hello');
    expect(await result).toEqual({ data: Buffer.from('got hello after your FIN'), how: 'end' });

    // The upstream ends first; the client can still send after that.
    const u2 = await upstream((s2) => {
      s2.write('bye first');
      s2.end();
      s2.on('data', () => undefined);
    });
    await createEndpoint(mock, 'tcp://hc2.x:7901', { upstream_url: u2.upstreamUrl });
    const t = await open(pool, 'tcp://hc2.x:7901');
    const r2 = ending(t);
    await new Promise((r) => t.once('end', r));
    expect(t.writable).toBe(true);
    t.end('still here');
    expect(await r2).toEqual({ data: Buffer.from('bye first'), how: 'end' });
  });

  it('passes an abort on either side to the other as a reset', async () => {
    const { mock, pool } = await setup();
    const seen: string[] = [];
    const u = await upstream((s) => {
      s.on('error', (e: NodeJS.ErrnoException) => seen.push(e.code ?? e.message));
      s.on('end', () => seen.push('end'));
      s.on('data', (c: Buffer) => {
        if (c.toString() === 'reset me') s.resetAndDestroy();
      });
    });
    await createEndpoint(mock, 'tcp://ab.x:7902', { upstream_url: u.upstreamUrl });
    // Client → upstream: RST_STREAM arrives as a TCP reset, not an end.
    const a = await open(pool, 'tcp://ab.x:7902');
    a.write('x');
    await new Promise((r) => setTimeout(r, 100));
    a.destroy(); // RST_STREAM CANCEL, no END_STREAM before it (close() would send one)
    await waitFor(() => seen.length > 0, 5_000);
    expect(seen).toEqual(['ECONNRESET']);
    // Upstream → client: a TCP reset arrives as RST_STREAM CONNECT_ERROR, with no END_STREAM before
    // it (reset.ts abortStream).
    const b = await open(pool, 'tcp://ab.x:7902');
    const r = ending(b);
    b.write('reset me');
    expect((await r).how).toBe(`reset ${constants.NGHTTP2_CONNECT_ERROR}`);
  });

  it('GOAWAY mid-transfer: the open stream finishes, the next goes on a new session', async () => {
    const { mock, pool } = await setup({}, 1);
    const echo = await startEcho();
    cleanup.push(() => echo.close());
    await createEndpoint(mock, 'tcp://ga.x:7903', { upstream_url: echo.upstreamUrl });
    const s = await open(pool, 'tcp://ga.x:7903');
    const r = ending(s);
    const payload = randomBytes(4 * 1024 * 1024);
    s.write(payload.subarray(0, 1024 * 1024));
    mock.api.ingressGoaway!();
    await new Promise((res) => setTimeout(res, 50));
    s.end(payload.subarray(1024 * 1024));
    const got = await r;
    expect(got.how).toBe('end');
    expect(createHash('sha256').update(got.data).digest('hex')).toBe(
      createHash('sha256').update(payload).digest('hex'),
    );
    const next = await open(pool, 'tcp://ga.x:7903');
    const r2 = ending(next);
    next.end('after goaway');
    expect((await r2).data.toString()).toBe('after goaway');
  });

  /**
   * Echoes `streams` streams of `mib` MiB at once, written in 1 MiB pieces as they drain; each
   * must come back byte-exact with a clean end. What it saw when one stalls: how far each got.
   */
  async function echoAtOnce(pool: IngressV2Pool, url: string, streams: number, mib: number): Promise<void> {
    const payload = randomBytes(mib * 1024 * 1024);
    const got: number[] = [];
    const results = await Promise.all(
      Array.from({ length: streams }, async (_, i) => {
        const s = await open(pool, url);
        got[i] = 0;
        s.on('data', (c: Buffer) => (got[i]! += c.length));
        const result = ending(s);
        void (async () => {
          for (let at = 0; at < payload.length; at += 1024 * 1024) {
            if (!s.write(payload.subarray(at, at + 1024 * 1024)))
              await new Promise((r) => s.once('drain', r));
          }
          s.end();
        })();
        return result;
      }),
    ).then(
      (r) => r,
      (err: unknown) => String(err),
    );
    const stalled = new Promise<'stalled'>((r) => {
      const t = setTimeout(() => r('stalled'), budget(30_000));
      cleanup.push(() => clearTimeout(t));
    });
    const outcome = await Promise.race([Promise.resolve(results), stalled]);
    const seen =
      outcome === 'stalled'
        ? `stalled with ${got.join(', ')} of ${payload.length} bytes echoed`
        : typeof outcome === 'string'
          ? outcome
          : outcome.map((o) => (o.how === 'end' && o.data.equals(payload) ? 'ok' : o.how)).join(', ');
    expect(seen).toBe(Array.from({ length: streams }, () => 'ok').join(', '));
  }

  it('both ways at once at large windows: an echo of more than the kernel buffers does not stall', async () => {
    // 8 MiB windows on both sides let each session have more in flight than loopback's socket
    // buffers hold; Node's session stops reading while its write waits, so before the ingress kept
    // reading (src/mock/ingress/keep-reading-socket.ts) both writes waited on each other for good (TLS).
    const window = 8 * 1024 * 1024;
    const { mock, pool } = await setup({ h2_window_bytes: window }, 1, window);
    const echo = await startEcho();
    cleanup.push(() => echo.close());
    await createEndpoint(mock, 'tcp://bw.x:7906', { upstream_url: echo.upstreamUrl });
    await echoAtOnce(pool, 'tcp://bw.x:7906', 1, 12);
  });

  it('both ways at once at the default windows: 16 echo streams of 4 MiB on two sessions do not stall', async () => {
    // Before the ingress kept reading, this stalled at the defaults (mock 1 MiB, pool 512 KiB):
    // sixteen open windows each way are more than the kernel buffers between the two hold.
    const { mock, pool } = await setup({}, 2);
    const echo = await startEcho();
    cleanup.push(() => echo.close());
    await createEndpoint(mock, 'tcp://bw16.x:7907', { upstream_url: echo.upstreamUrl });
    await echoAtOnce(pool, 'tcp://bw16.x:7907', 16, 4);
  });

  it("honours the ingress's MAX_CONCURRENT_STREAMS: a second stream goes on another session", async () => {
    const { mock, pool } = await setup({ h2_max_concurrent_streams: 1 });
    const echo = await startEcho();
    cleanup.push(() => echo.close());
    await createEndpoint(mock, 'tcp://mc.x:7904', { upstream_url: echo.upstreamUrl });
    const a = await open(pool, 'tcp://mc.x:7904');
    const b = await open(pool, 'tcp://mc.x:7904');
    expect(pool.sessionCount).toBe(2);
    for (const [s, text] of [
      [a, 'a'],
      [b, 'b'],
    ] as const) {
      const r = ending(s);
      s.end(text);
      expect((await r).data.toString()).toBe(text);
    }
  });

  it('answers an error status naming the ERR_ code: a refused authtoken and a refused upstream', async () => {
    const { mock, pool } = await setup();
    await createEndpoint(mock, 'tcp://rf.x:7905', { upstream_url: 'tcp://127.0.0.1:1' });
    const e1 = await pool
      .open({ authtoken: 'not_a_token_at_all', url: 'tcp://rf.x:7905', timeoutMs: 5_000 })
      .catch((e: unknown) => e);
    expect(e1).toBeInstanceOf(IngressError);
    expect((e1 as IngressError).code).toBe('ERR_710');
    const e2 = await open(pool, 'tcp://rf.x:7905').catch((e: unknown) => e);
    expect((e2 as IngressError).code).toBe('ERR_730');
  });

  it("the authtoken check's URL (port 0) gets the ingress's verdict, not a client-side error", async () => {
    const { pool } = await setup();
    const bad = await pool
      .open({ authtoken: 'not_a_token_at_all', url: TOKEN_CHECK_URL, timeoutMs: 5_000 })
      .catch((e: unknown) => e);
    expect(bad, String(bad)).toBeInstanceOf(IngressError);
    expect((bad as IngressError).code).toBe('ERR_710');
    const good = await open(pool, TOKEN_CHECK_URL).catch((e: unknown) => e);
    // Any answer of the ingress but ERR_710 means the authtoken was accepted.
    expect(good, String(good)).toBeInstanceOf(IngressError);
    expect((good as IngressError).fromIngress).toBe(true);
    expect((good as IngressError).code).not.toBe('ERR_710');
  });
});

/** Streams over one TLS HTTP/2 session arrive byte-exact: 50 transfers of 16 MiB, 5 at a time. */
describe('ingress v2 over TLS: 50 × 16 MiB', () => {
  it(
    'delivers every transfer sha256-equal, with a clean end',
    async () => {
      const mock = await startTestMock({
        ingress: {},
        config: {
          accounts: [{ id: 'acme', api_keys: ['acme_api_key_0123456789'], authtokens: [ACME_AUTHTOKEN] }],
          ingress: { tls: true },
        },
      });
      const echo = await startEcho();
      const pool = new IngressV2Pool({
        address: mock.api.ingressAddress!,
        tls: { ca: mock.api.ingressCaPem! },
        maxSessions: 2,
      });
      try {
        await createEndpoint(mock, 'tcp://big.x:7910', { upstream_url: echo.upstreamUrl });
        const { results, want } = await fiftyEchoTransfers(
          () => pool.open({ authtoken: ACME_AUTHTOKEN, url: 'tcp://big.x:7910', timeoutMs: 20_000 }),
          (s, sawEnd) => (sawEnd && s.rstCode === 0 ? undefined : `reset ${s.rstCode}`),
        );
        expect(results).toEqual(Array.from({ length: 50 }, () => want));
        expect(pool.sessionCount).toBeLessThanOrEqual(2);
      } finally {
        pool.destroy();
        await Promise.all([mock.close(), echo.close()]);
      }
    },
    budget(300_000),
  );
});
