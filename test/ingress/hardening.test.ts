import { generateKeyPairSync } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { connectThroughIngress, IngressError } from '../../src/api/ingress/dialer.js';
import { MockConfig } from '../../src/mock/config.js';
import { IngressConfigError } from '../../src/mock/ingress/tls-material.js';
import { startMockApi } from '../../src/mock/server.js';
import { ACME_AUTHTOKEN, startTestMock, twoAccounts, type TestMock } from '../helpers/mock-api.js';
import {
  createEndpoint,
  openSilent,
  rawExchange,
  readAll,
  startEcho,
  waitFor,
  type SilentSocket,
  type TestServer,
} from './helpers.js';
import { devCertificateFiles } from '../helpers/cert-files.js';
import { budget } from '../helpers/budget.js';

async function ingressError(p: Promise<Socket>): Promise<IngressError> {
  const err = await p.then(
    (s) => {
      s.destroy();
      return undefined;
    },
    (e: unknown) => e,
  );
  if (!(err instanceof IngressError)) throw new Error(`expected an IngressError, got ${String(err)}`);
  return err;
}

/** One round trip through the ingress to an echo upstream; retries only while the ingress is full. */
async function echoThrough(
  address: string,
  url: string,
  payload: string,
  tls?: { ca: string },
): Promise<string> {
  for (let attempt = 0; ; attempt++) {
    try {
      const sock = await connectThroughIngress({
        address,
        authtoken: ACME_AUTHTOKEN,
        url,
        ...(tls ? { tls } : {}),
        timeoutMs: 20_000,
      });
      const all = readAll(sock, 20_000);
      sock.end(payload);
      return (await all).toString();
    } catch (err) {
      if (!(err instanceof IngressError) || err.code !== 'ERR_740' || attempt >= 100) throw err;
      await new Promise((r) => setTimeout(r, 20));
    }
  }
}

const portOf = (url: string) => Number(new URL(url).port);

describe('binding ingress never dials its own listeners', () => {
  let t: TestMock;
  let echo: TestServer;
  let address: string;
  let ingressPort: number;

  beforeAll(async () => {
    t = await startTestMock({ ingress: {} });
    address = t.api.ingressAddress!;
    ingressPort = Number(address.split(':')[1]);
    echo = await startEcho();
  });
  afterAll(async () => {
    await t?.close();
    await echo?.close();
  });

  const dial = (url: string) => connectThroughIngress({ address, authtoken: ACME_AUTHTOKEN, url });

  it('refuses the admin interface as an upstream: GET /admin/accounts gets ERR_732, not the accounts', async () => {
    await createEndpoint(t, 'tcp://sneaky.default:8000', {
      upstream_url: `tcp://127.0.0.1:${portOf(t.adminUrl)}`,
    });
    const preface = JSON.stringify({ v: 1, authtoken: ACME_AUTHTOKEN, url: 'tcp://sneaky.default:8000' });
    const out = await rawExchange(
      address,
      `${preface}\nGET /admin/accounts HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
    );
    const lines = out.split('\n');
    expect(JSON.parse(lines[0]!)).toMatchObject({ ok: false, code: 'ERR_732' });
    expect(lines.slice(1).join('')).toBe('');
    expect(out).not.toContain('globex');
  });

  it.each([
    [
      'the admin interface by name (localhost)',
      () => `tcp://localhost:${portOf(t.adminUrl)}`,
      'admin interface',
    ],
    [
      'the admin interface by a short IPv4 name (127.1)',
      () => `tcp://127.1:${portOf(t.adminUrl)}`,
      'admin interface',
    ],
    [
      'the admin interface as IPv4-mapped IPv6',
      () => `tcp://[::ffff:127.0.0.1]:${portOf(t.adminUrl)}`,
      'admin interface',
    ],
    ['the admin interface through 0.0.0.0', () => `tcp://0.0.0.0:${portOf(t.adminUrl)}`, 'admin interface'],
    ['the management API', () => `http://127.0.0.1:${portOf(t.url)}`, 'management API'],
    ['the ingress itself', () => `tcp://127.0.0.1:${ingressPort}`, 'binding ingress'],
  ])('refuses %s with ERR_732 naming it', async (_label, upstream, label) => {
    const url = `tcp://own-${Math.random().toString(36).slice(2, 8)}.default:9000`;
    await createEndpoint(t, url, { upstream_url: upstream() });
    const err = await ingressError(dial(url));
    expect(err.code).toBe('ERR_732');
    expect(err.msg).toContain(label);
  });

  it('stops a chain through the ingress at the first hop: one reply, then the connection closes', async () => {
    await createEndpoint(t, 'tcp://loop.default:7000', { upstream_url: `tcp://${address}` });
    const preface = JSON.stringify({ v: 1, authtoken: ACME_AUTHTOKEN, url: 'tcp://loop.default:7000' });
    const out = await rawExchange(address, `${preface}\n`.repeat(50));
    const lines = out.split('\n').filter((l) => l !== '');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ ok: false, code: 'ERR_732' });
  });

  it('still dials other loopback upstreams, by name too', async () => {
    await createEndpoint(t, 'tcp://echo-by-name.default:7000', {
      upstream_url: `tcp://localhost:${echo.port}`,
    });
    expect(await echoThrough(address, 'tcp://echo-by-name.default:7000', 'named loopback')).toBe(
      'named loopback',
    );
  });
});

describe('binding ingress advertise address', () => {
  let t: TestMock;
  let other: TestServer;

  beforeAll(async () => {
    // A port something else listens on, so dialling it would succeed if the check did not stop it.
    other = await startEcho();
    t = await startTestMock({ ingress: { advertise: `localhost:${other.port}` } });
  });
  afterAll(async () => {
    await t?.close();
    await other?.close();
  });

  it('is what operators get at registration, while the ingress listens elsewhere', async () => {
    expect(t.api.ingressAdvertiseAddress).toBe(`localhost:${other.port}`);
    expect(t.api.ingressAddress).toMatch(/^127\.0\.0\.1:\d+$/);
    const op = await t.client.kubernetesOperators.create({ deployment: { name: 'b', namespace: 'c' } });
    expect(op.binding.ingress_endpoint).toBe(`localhost:${other.port}`);
  });

  it('counts as an own address: an upstream resolving to it is refused', async () => {
    await createEndpoint(t, 'tcp://adv.default:7000', { upstream_url: `tcp://127.0.0.1:${other.port}` });
    const err = await ingressError(
      connectThroughIngress({
        address: t.api.ingressAddress!,
        authtoken: ACME_AUTHTOKEN,
        url: 'tcp://adv.default:7000',
      }),
    );
    expect(err.code).toBe('ERR_732');
    expect(err.msg).toContain('advertised');
  });
});

describe('binding ingress against silent sockets (plain)', () => {
  const limits = {
    max_connections: 4,
    max_connections_per_url: 4,
    max_handshakes: 6,
    max_handshakes_per_source: 3,
    preface_timeout_ms: 60_000,
  };
  let t: TestMock;
  let echo: TestServer;
  const silent: SilentSocket[] = [];

  beforeAll(async () => {
    echo = await startEcho();
  });
  afterEach(async () => {
    for (const s of silent.splice(0)) s.socket.destroy();
    await t?.close();
  });
  afterAll(async () => {
    await echo?.close();
  });

  async function start(): Promise<string> {
    t = await startTestMock({ config: { ...twoAccounts, ingress: limits }, ingress: {} });
    await createEndpoint(t, 'http://echo.default', { upstream_url: echo.upstreamUrl });
    return t.api.ingressAddress!;
  }

  it('silent sockets take no max_connections slot: every authenticated slot stays usable', async () => {
    const address = await start();
    for (const src of ['127.0.0.2', '127.0.0.2', '127.0.0.2', '127.0.0.3', '127.0.0.3']) {
      silent.push(await openSilent(address, src));
    }
    const held: Socket[] = [];
    try {
      for (let i = 0; i < limits.max_connections; i++) {
        held.push(
          await connectThroughIngress({ address, authtoken: ACME_AUTHTOKEN, url: 'http://echo.default' }),
        );
      }
      // The established cap itself still holds.
      const err = await ingressError(
        connectThroughIngress({ address, authtoken: ACME_AUTHTOKEN, url: 'http://echo.default' }),
      );
      expect(err.code).toBe('ERR_740');
    } finally {
      for (const s of held) s.destroy();
    }
    expect(silent.every((s) => !s.closed)).toBe(true);
  });

  it('refuses a source beyond max_handshakes_per_source with ERR_743 and leaves its other sockets alone', async () => {
    const address = await start();
    for (let i = 0; i < limits.max_handshakes_per_source; i++)
      silent.push(await openSilent(address, '127.0.0.4'));
    const extra = await openSilent(address, '127.0.0.4');
    silent.push(extra);
    await extra.whenClosed;
    expect(JSON.parse(extra.received().trim())).toMatchObject({ ok: false, code: 'ERR_743' });
    expect(silent.slice(0, limits.max_handshakes_per_source).every((s) => !s.closed)).toBe(true);
  });

  it(
    'under a reconnecting flood of silent sockets from several sources, every authenticated stream gets through',
    { timeout: budget(60_000) },
    async () => {
      const address = await start();
      const codes = new Set<string>();
      let running = true;
      let connects = 0;
      const live = new Set<Socket>();
      // Each attacker source wants more sockets than its cap; together they want more than
      // max_handshakes. Every closed socket is replaced a moment later (bounded in total).
      const attack = (src: string) => {
        if (!running || connects >= 5000) return;
        connects++;
        openSilent(address, src).then(
          (s) => {
            live.add(s.socket);
            void s.whenClosed.then(() => {
              live.delete(s.socket);
              for (const line of s.received().split('\n')) {
                if (line.trim()) codes.add((JSON.parse(line) as { code: string }).code);
              }
              setTimeout(() => attack(src), 5);
            });
          },
          () => setTimeout(() => attack(src), 5),
        );
      };
      try {
        for (const src of ['127.0.0.2', '127.0.0.3', '127.0.0.4']) for (let i = 0; i < 5; i++) attack(src);
        await waitFor(() => codes.has('ERR_743') && codes.has('ERR_742'), 20_000);

        const results: string[] = [];
        for (let i = 0; i < 10; i++)
          results.push(await echoThrough(address, 'http://echo.default', `stream-${i}`));
        expect(results).toEqual(Array.from({ length: 10 }, (_, i) => `stream-${i}`));
        // The flood was still on while the streams went through.
        expect(connects).toBeLessThan(5000);
      } finally {
        running = false;
        for (const s of live) s.destroy();
      }
      expect([...codes].sort()).toEqual(['ERR_742', 'ERR_743']);
    },
  );
});

describe('binding ingress against silent sockets (TLS)', () => {
  let t: TestMock;
  let echo: TestServer;
  const silent: SilentSocket[] = [];

  beforeAll(async () => {
    echo = await startEcho();
    t = await startTestMock({
      config: {
        ...twoAccounts,
        ingress: { tls: true, max_handshakes: 4, max_handshakes_per_source: 2, preface_timeout_ms: 60_000 },
      },
      ingress: {},
    });
    await createEndpoint(t, 'tcp://secure.default:443', { upstream_url: echo.upstreamUrl });
  });
  afterAll(async () => {
    for (const s of silent) s.socket.destroy();
    await t?.close();
    await echo?.close();
  });

  it(
    'counts connections still in the TLS handshake: per-source refusal, and eviction for a real client',
    { timeout: budget(30_000) },
    async () => {
      const address = t.api.ingressAddress!;
      const a1 = await openSilent(address, '127.0.0.2');
      const a2 = await openSilent(address, '127.0.0.2');
      const a3 = await openSilent(address, '127.0.0.2');
      silent.push(a1, a2, a3);
      // Nothing can be answered before a handshake: the socket over the source's cap is closed.
      await a3.whenClosed;
      const b1 = await openSilent(address, '127.0.0.3');
      const b2 = await openSilent(address, '127.0.0.3');
      silent.push(b1, b2);
      expect([a1, a2, b1, b2].every((s) => !s.closed)).toBe(true);

      // Every handshake slot is taken; a real client evicts the oldest socket of a largest source.
      const out = await echoThrough(address, 'tcp://secure.default:443', 'through a full handshake pool', {
        ca: t.api.ingressCaPem!,
      });
      expect(out).toBe('through a full handshake pool');
      await a1.whenClosed;
      expect([a2, b1, b2].every((s) => !s.closed)).toBe(true);
    },
  );
});

describe('binding ingress TLS with certificate files', () => {
  let dir: string;
  let certFile: string;
  let keyFile: string;
  let cert: string;

  beforeAll(async () => {
    ({ dir, cert, certFile, keyFile } = await devCertificateFiles('eb-ingress-tls-'));
  });

  it('serves TLS with the configured PEM files', async () => {
    const echo = await startEcho();
    const t = await startTestMock({
      config: { ...twoAccounts, ingress: { tls: { cert_file: certFile, key_file: keyFile } } },
      ingress: {},
    });
    try {
      expect(t.api.ingressCaPem).toBeUndefined();
      await createEndpoint(t, 'tcp://files.default:443', { upstream_url: echo.upstreamUrl });
      expect(
        await echoThrough(t.api.ingressAddress!, 'tcp://files.default:443', 'with files', { ca: cert }),
      ).toBe('with files');
    } finally {
      await t.close();
      await echo.close();
    }
  });

  it('fails at startup naming the field when a file cannot be read or the pair does not match', async () => {
    const missing = join(dir, 'missing.crt');
    await expect(
      startMockApi({ config: { ingress: { tls: { cert_file: missing, key_file: keyFile } } }, ingress: {} }),
    ).rejects.toThrow(
      new RegExp(`ingress\\.tls\\.cert_file.*"${missing.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}"`),
    );
    const otherKey = join(dir, 'other.key');
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    writeFileSync(otherKey, privateKey.export({ type: 'pkcs8', format: 'pem' }));
    const err: unknown = await startMockApi({
      config: { ingress: { tls: { cert_file: certFile, key_file: otherKey } } },
      ingress: {},
    }).then(
      (api) => api.stop(),
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(IngressConfigError);
    expect((err as Error).message).toMatch(/not a usable PEM pair/);
  });
});

describe('binding ingress config', () => {
  it('names the field and the rule for bad ingress settings', () => {
    const r = MockConfig.safeParse({
      ingress: {
        max_handshakes: 4,
        max_handshakes_per_source: 8,
        advertise: 'not a host',
        tls: { cert_file: 'x' },
      },
    });
    expect(r.success).toBe(false);
    const issues = r.error!.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    expect(issues.some((i) => i.startsWith('ingress.advertise: must be host:port or host'))).toBe(true);
    expect(issues.some((i) => i.startsWith('ingress.tls'))).toBe(true);
  });

  it('checks max_handshakes_per_source against max_handshakes', () => {
    const r = MockConfig.safeParse({ ingress: { max_handshakes: 4, max_handshakes_per_source: 8 } });
    expect(r.error?.issues.map((i) => `${i.path.join('.')}: ${i.message}`)).toEqual([
      'ingress.max_handshakes_per_source: must not exceed max_handshakes (4)',
    ]);
  });

  it('defaults max_handshakes_per_source to 64, or to a smaller max_handshakes', () => {
    expect(MockConfig.parse({}).ingress).toMatchObject({
      max_handshakes: 256,
      max_handshakes_per_source: 64,
    });
    expect(MockConfig.parse({ ingress: { max_handshakes: 10 } }).ingress.max_handshakes_per_source).toBe(10);
  });

  it('starts the ingress when the config sets ingress.port, with the configured host', async () => {
    const api = await startMockApi({ config: { ingress: { port: 0, host: 'localhost' } } });
    try {
      expect(api.ingressAddress).toMatch(/^(127\.0\.0\.1|\[::1\]):\d+$/);
      expect(api.services.ingressAddress).toBe(api.ingressAddress);
    } finally {
      await api.stop();
    }
  });
});
