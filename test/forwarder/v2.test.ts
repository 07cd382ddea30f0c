import { budget } from '../helpers/budget.js';
import { createHash, randomBytes } from 'node:crypto';
import type { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { metricValue } from '../kube/helpers.js';
import { fiftyEchoTransfers, startServer, waitFor, type TestServer } from '../ingress/helpers.js';
import {
  connectTo,
  createService,
  endpoint,
  freePort,
  internalService,
  logLines,
  roundTrip,
  startOver,
  useEnv,
  type Env,
} from './helpers.js';
import { EARLY_BYTES_MAX } from '../../src/forwarder/connection.js';
import type { Forwarder } from '../../src/forwarder/forwarder.js';
import type { ForwarderConfigInput } from '../../src/forwarder/config.js';
import { pinnedAtMost } from '../../src/api/ingress/window-share.js';

/** How a client socket ended: its bytes, and 'end' (clean FIN) or the error code (a reset). */
function ending(s: Socket): Promise<{ data: string; how: string }> {
  return new Promise((resolve) => {
    let data = '';
    let how = 'closed without end';
    s.on('data', (c: Buffer) => (data += c.toString()));
    s.once('end', () => (how = 'end'));
    s.once('error', (e: NodeJS.ErrnoException) => (how = e.code ?? e.message));
    s.once('close', () => resolve({ data, how }));
  });
}

/** Writes `total` bytes to a socket as it drains (never more than one chunk unsent), then ends it. */
function offer(s: Socket, total: number): void {
  const chunk = Buffer.alloc(64 * 1024, 0x61);
  let left = total;
  const pump = () => {
    while (left > 0) {
      left -= chunk.length;
      if (!s.write(chunk)) return void s.once('drain', pump);
    }
    s.end();
  };
  pump();
}

const SIXTEEN_MIB = Buffer.alloc(16 * 1024 * 1024, 0x61);

/** What the forwarder buffers once it stopped growing (nothing more arrives in 300 ms). */
async function settled(fwd: Forwarder): Promise<number> {
  let last = -1;
  for (let i = 0; i < 100; i++) {
    const now = fwd.bufferedBytes();
    if (now === last) return now;
    last = now;
    await new Promise((r) => setTimeout(r, 300));
  }
  return last;
}

/** The mock ingress's v2 stream lines with this outcome. */
const streams = (env: Env, outcome: string) =>
  env.mockLogs.lines.filter(
    (l) => l['msg'] === 'ingress connection' && l['v'] === 2 && l['outcome'] === outcome,
  );

const v2Upstreams = (fwd: Forwarder, protocol: 'v1' | 'v2') =>
  metricValue(fwd.registry, 'endpoint_binder_forwarder_ingress_upstreams_total', { protocol });

/**
 * The forwarder over binding ingress protocol v2 (#27 item 4): every forwarded connection one
 * HTTP/2 CONNECT stream on a few sessions, against the mock ingress over TLS (ALPN h2) and plain
 * TCP (h2c). Streams keep the proxy's promise: a clean end stays clean, an abort stays an abort.
 */
describe.each([false, true])('forwarder over v2 (tls %s)', (tls) => {
  const setup = useEnv({
    ingressTls: tls,
    ingress: { h2_session_stream_budget: 1_000 },
  });

  async function served(
    env: Env,
    url: string,
    upstream: TestServer | string,
    extra: Partial<ForwarderConfigInput> = {},
  ): Promise<{ fwd: Forwarder; port: number }> {
    await endpoint(env, url, typeof upstream === 'string' ? upstream : upstream.upstreamUrl);
    const port = await freePort();
    await createService(env.sim, internalService(`ep-${port}`, { [port]: url }));
    const fwd = await startOver(env, tls, { ...extra, ingress: { protocol: 'v2', ...extra.ingress } });
    await waitFor(() => fwd.boundPorts().includes(port), 10_000);
    return { fwd, port };
  }

  it('passes a half-close both ways: FIN in, answer after it; FIN out, the client still sends', async () => {
    const env = await setup();
    const afterFin = await startServer((s) => {
      let got = '';
      s.on('data', (c: Buffer) => (got += c.toString()));
      s.on('end', () => s.end(`got ${got} after your FIN`));
    });
    let late = '';
    const endsFirst = await startServer((s) => {
      s.end('bye first');
      s.on('data', (c: Buffer) => (late += c.toString()));
    });
    try {
      const { fwd, port } = await served(env, 'tcp://hc.x:7700', afterFin);
      const c = await connectTo(port);
      const r = ending(c);
      c.end('hello');
      expect(await r).toEqual({ data: 'got hello after your FIN', how: 'end' });

      await endpoint(env, 'tcp://hc2.x:7701', endsFirst.upstreamUrl);
      const port2 = await freePort();
      await createService(env.sim, internalService('ep-hc2', { [port2]: 'tcp://hc2.x:7701' }));
      await waitFor(() => fwd.boundPorts().includes(port2), 10_000);
      const d = await connectTo(port2);
      const r2 = ending(d);
      d.write('x');
      await new Promise((res) => d.once('end', res));
      d.end('still here');
      expect((await r2).how).toBe('end');
      await waitFor(() => late === 'xstill here', 5_000);
      expect(await v2Upstreams(fwd, 'v2')).toBeGreaterThanOrEqual(2);
      expect(await v2Upstreams(fwd, 'v1')).toBe(0);
    } finally {
      await Promise.all([afterFin.close(), endsFirst.close()]);
    }
  });

  it('passes an abort on either side to the other as a reset, never as a clean end', async () => {
    const env = await setup();
    const seen: string[] = [];
    let received = 0;
    const u = await startServer((s) => {
      s.on('error', (e: NodeJS.ErrnoException) => seen.push(e.code ?? e.message));
      s.on('end', () => seen.push('end'));
      s.on('data', (c: Buffer) => {
        received += c.length;
        if (c.toString().includes('reset me')) s.resetAndDestroy();
      });
    });
    try {
      const { port } = await served(env, 'tcp://ab.x:7702', u);
      // Client → upstream.
      const a = await connectTo(port);
      a.write('x');
      await waitFor(() => received > 0, 5_000);
      a.resetAndDestroy();
      await waitFor(() => seen.length > 0, 5_000);
      expect(seen).toEqual(['ECONNRESET']);
      // Upstream → client.
      const b = await connectTo(port);
      const r = ending(b);
      b.write('reset me');
      expect((await r).how).toBe('ECONNRESET');
    } finally {
      await u.close();
    }
  });

  it('sends the first bytes with the CONNECT request, before the ingress answered', async () => {
    const env = await setup();
    const { port } = await served(env, 'tcp://early.x:7703', env.echo.upstreamUrl);
    const c = await connectTo(port);
    expect(await roundTrip(c, 'GET / HTTP/1.1\r\n\r\n')).toBe('GET / HTTP/1.1\r\n\r\n');
    c.end();
    await waitFor(() => streams(env, 'closed').length === 1, 5_000);
    // The ingress had the request in the stream's buffer when it answered 200.
    expect(streams(env, 'closed')[0]).toMatchObject({ early_bytes: 18 });
  });

  it('a stream has its whole window in flight, and a client that stops reading pins no more than it', async () => {
    const env = await setup();
    // An upstream that sends 16 MiB at once, to a client that never reads.
    const source = await startServer((s) => s.end(SIXTEEN_MIB));
    const window = 512 * 1024;
    const { fwd, port } = await served(env, 'tcp://window.x:7709', source, {
      ingress: { streamWindowBytes: window, sharedWindowBytes: 0 },
    });
    const c = await connectTo(port);
    c.pause();
    c.write('x');
    // Past Node's default 64 KiB windows (stream and session): the configured ones are in use.
    await waitFor(() => fwd.bufferedBytes() > window / 2, 10_000);
    const last = await settled(fwd);
    // The stream's window plus one high-water mark of the client socket, not the 16 MiB.
    expect(last, `buffered in the forwarder for one non-reading client: ${last} bytes`).toBeLessThanOrEqual(
      window + 64 * 1024,
    );
    c.destroy();
    await source.close();
  });

  it("a session's streams share its download window: one alone has all of it, many have their floor, and what they pin stays bounded", async () => {
    const env = await setup();
    const source = await startServer((s) => s.end(SIXTEEN_MIB));
    const share = { floor: 512 * 1024, shared: 8 * 1024 * 1024 };
    const { fwd, port } = await served(env, 'tcp://share.x:7713', source, {
      ingress: { sessions: 1, streamWindowBytes: share.floor, sharedWindowBytes: share.shared },
    });
    const stalledClient = async () => {
      const c = await connectTo(port);
      c.pause();
      c.write('x');
      return c;
    };
    try {
      // Alone on its session: the whole shared window in flight (a download at shared / RTT).
      const alone = await stalledClient();
      await waitFor(() => fwd.bufferedBytes() > 4 * share.floor, 10_000, 'one stream past four floors');
      let pinned = await settled(fwd);
      expect(pinned, `one non-reading client pins ${pinned} bytes`).toBeGreaterThan(share.shared / 2);
      expect(pinned).toBeLessThanOrEqual(share.shared + 64 * 1024);
      // Fifteen more: each new stream lowers every stream's window before it opens, so sixteen
      // that all stopped reading pin at most pinnedAtMost(16), 24 MiB, not 16 × 8 MiB.
      const more = await Promise.all(Array.from({ length: 15 }, stalledClient));
      await waitFor(
        () => fwd.bufferedBytes() > pinned + 15 * (share.floor / 2),
        20_000,
        'sixteen streams filled',
      );
      pinned = await settled(fwd);
      const bound = pinnedAtMost(16, share) + 16 * 64 * 1024;
      expect(pinned, `sixteen non-reading clients pin ${pinned} bytes (bound ${bound})`).toBeLessThanOrEqual(
        bound,
      );
      // They leave: the window grows back for the next stream alone on the session.
      for (const c of [alone, ...more]) c.destroy();
      await waitFor(() => fwd.openConnections() === 0, 10_000, 'the sixteen closed');
      await stalledClient();
      await waitFor(
        () => fwd.bufferedBytes() > 4 * share.floor,
        10_000,
        'a new lone stream past four floors',
      );
      pinned = await settled(fwd);
      expect(pinned, `a lone client after the others left pins ${pinned} bytes`).toBeGreaterThan(
        share.shared / 2,
      );
    } finally {
      await source.close();
    }
  });

  it("clients of one endpoint that stop reading leave another endpoint's streams on the same session flowing", async () => {
    const env = await setup();
    // 20 clients of A never read; A's upstream offers each 8 MiB, written as the socket drains,
    // so only what flows is ever allocated: on loopback the kernel's socket buffers take some
    // MiB per client before the forwarder holds any byte. Each stream may then hold its 64 KiB
    // window (the least allowed) in the forwarder: together 20 windows, more than the session's
    // own window (16 × the stream's).
    // Only a stream's window may wait for its reader: were the session held (its window, or its
    // socket paused for one slow stream), B's stream on the same session would stall behind A.
    const window = 64 * 1024;
    const offered = 8 * 1024 * 1024;
    const flood = await startServer((s) => offer(s, offered));
    await endpoint(env, 'tcp://flood.x:7711', flood.upstreamUrl);
    await endpoint(env, 'tcp://quiet.x:7712', env.echo.upstreamUrl);
    const [portA, portB] = [await freePort(), await freePort()];
    await createService(env.sim, internalService('ep-flood', { [portA]: 'tcp://flood.x:7711' }));
    await createService(env.sim, internalService('ep-quiet', { [portB]: 'tcp://quiet.x:7712' }));
    const fwd = await startOver(env, tls, {
      ingress: { protocol: 'v2', sessions: 1, streamWindowBytes: window },
    });
    await waitFor(() => fwd.boundPorts().includes(portA) && fwd.boundPorts().includes(portB), 10_000);
    const stalled = await Promise.all(Array.from({ length: 20 }, () => connectTo(portA)));
    for (const c of stalled) {
      c.pause();
      c.write('x');
    }
    try {
      await waitFor(
        () => fwd.bufferedBytes() > 16 * window,
        20_000,
        `A's clients holding more than a session window (${16 * window} bytes) in the forwarder`,
      );
      expect(await metricValue(fwd.registry, 'endpoint_binder_forwarder_ingress_sessions')).toBe(1);
      // B, on that one session, still moves 256 KiB both ways, byte-exact: four of its windows.
      const b = await connectTo(portB);
      const payload = randomBytes(128 * 1024).toString('hex');
      expect(await roundTrip(b, payload, 20_000)).toBe(payload);
      b.destroy();
    } finally {
      for (const c of stalled) c.destroy();
      await flood.close();
    }
  });

  it(
    'GOAWAY mid-transfer: the live stream finishes intact, the next goes on a new session',
    async () => {
      const env = await setup();
      const { fwd, port } = await served(env, 'tcp://ga.x:7704', env.echo.upstreamUrl, {
        ingress: { sessions: 1 },
      });
      const sessions = () => metricValue(fwd.registry, 'endpoint_binder_forwarder_ingress_sessions');
      const payload = randomBytes(8 * 1024 * 1024);
      const c = await connectTo(port);
      const hash = createHash('sha256');
      let got = 0;
      c.on('data', (b: Buffer) => {
        got += b.length;
        hash.update(b);
      });
      const r = ending(c);
      c.write(payload.subarray(0, 1024 * 1024));
      await waitFor(() => got > 0, 10_000);
      expect(await sessions()).toBe(1);
      env.mock.api.ingressGoaway!();
      // While the old session drains, a new connection needs a new one.
      const second = await connectTo(port);
      expect(await roundTrip(second, 'after goaway')).toBe('after goaway');
      expect(await sessions()).toBe(2);
      second.destroy();
      c.end(payload.subarray(1024 * 1024));
      expect((await r).how).toBe('end');
      expect(hash.digest('hex')).toBe(createHash('sha256').update(payload).digest('hex'));
    },
    budget(60_000),
  );
});

describe.each([false, true])(
  'forwarder over v2, a stream refused for lack of concurrency (tls %s)',
  (tls) => {
    // The ingress announces 256 streams per session but serves one: the second stream is refused
    // (REFUSED_STREAM) and must go to another session.
    const setup = useEnv({ ingressTls: tls, ingress: { h2_session_stream_budget: 1 } });

    it('is retried on another session', async () => {
      const env = await setup();
      await endpoint(env, 'tcp://rs.x:7705', env.echo.upstreamUrl);
      const port = await freePort();
      await createService(env.sim, internalService('ep-rs', { [port]: 'tcp://rs.x:7705' }));
      const fwd = await startOver(env, tls, { ingress: { protocol: 'v2', sessions: 1 } });
      await waitFor(() => fwd.boundPorts().includes(port), 10_000);
      const a = await connectTo(port);
      expect(await roundTrip(a, 'first holds its stream')).toBe('first holds its stream');
      const b = await connectTo(port);
      expect(await roundTrip(b, 'second on another session')).toBe('second on another session');
      expect(streams(env, 'refused_stream').length).toBeGreaterThanOrEqual(1);
      expect(
        await metricValue(fwd.registry, 'endpoint_binder_forwarder_ingress_refusals_total', {
          code: 'ERR_740',
        }),
      ).toBeGreaterThanOrEqual(1);
      expect(await metricValue(fwd.registry, 'endpoint_binder_forwarder_ingress_sessions')).toBe(2);
      a.destroy();
      b.destroy();
      // The refused stream's early bytes were kept and went out again with the retried request.
      await waitFor(() => streams(env, 'closed').length === 2, 5_000);
      const early = streams(env, 'closed').map((l) => l['early_bytes']);
      expect(early).toContain('second on another session'.length);
    });
  },
);

describe.each([false, true])('forwarder over v2, an ingress slow to answer (tls %s)', (tls) => {
  // The ingress waits before its 200, as a far one does: a stream opened at accept (tcp://, dialOn
  // accept) is open well before the client's first byte, and the answer well after it.
  const setup = useEnv({ ingressTls: tls, ingress: { h2_answer_delay_ms: 1_000 } });

  it('sends the bytes the client writes after the stream opened at once, not after the 200', async () => {
    const env = await setup();
    await endpoint(env, 'tcp://slow.x:7708', env.echo.upstreamUrl);
    const port = await freePort();
    await createService(env.sim, internalService('ep-slow', { [port]: 'tcp://slow.x:7708' }));
    const fwd = await startOver(env, tls, { ingress: { protocol: 'v2' }, dialOn: { tcp: 'accept' } });
    await waitFor(() => fwd.boundPorts().includes(port), 10_000);
    const c = await connectTo(port);
    // The stream is open (its request sent) before the client writes a byte.
    await waitFor(async () => (await v2Upstreams(fwd, 'v2')) === 1, 5_000);
    const payload = randomBytes(3_000);
    const got: Buffer[] = [];
    c.on('data', (b: Buffer) => got.push(b));
    c.write(payload.subarray(0, 1_000));
    c.write(payload.subarray(1_000));
    await waitFor(() => Buffer.concat(got).length >= payload.length, 10_000);
    expect(Buffer.concat(got).equals(payload)).toBe(true);
    c.end();
    await waitFor(() => streams(env, 'closed').length === 1, 5_000);
    // The ingress held them when it answered: they did not wait for the 200.
    expect(streams(env, 'closed')[0]).toMatchObject({ early_bytes: payload.length });

    // A client that sends more than is kept for a replay before the answer: the rest waits for
    // the 200 (not read, not held), and the whole transfer still arrives intact.
    const d = await connectTo(port);
    await waitFor(async () => (await v2Upstreams(fwd, 'v2')) === 2, 5_000);
    const big = randomBytes(1024 * 1024);
    const hash = createHash('sha256');
    let n = 0;
    d.on('data', (b: Buffer) => {
      n += b.length;
      hash.update(b);
    });
    const r = ending(d);
    d.end(big);
    expect((await r).how).toBe('end');
    expect(n).toBe(big.length);
    expect(hash.digest('hex')).toBe(createHash('sha256').update(big).digest('hex'));
    await waitFor(() => streams(env, 'closed').length === 2, 5_000);
    expect(streams(env, 'closed')[1]).toMatchObject({ early_bytes: EARLY_BYTES_MAX });
  });
});

describe.each([false, true])('forwarder ingress.protocol auto against a v1-only ingress (tls %s)', (tls) => {
  const setup = useEnv({ ingressTls: tls, ingress: { h2: false } });

  it('falls back to v1 and serves', async () => {
    const env = await setup();
    await endpoint(env, 'tcp://v1.x:7706', env.echo.upstreamUrl);
    const port = await freePort();
    await createService(env.sim, internalService('ep-v1', { [port]: 'tcp://v1.x:7706' }));
    const fwd = await startOver(env, tls);
    await waitFor(() => fwd.boundPorts().includes(port), 10_000);
    const c = await connectTo(port);
    expect(await roundTrip(c, 'spoken in v1')).toBe('spoken in v1');
    c.destroy();
    expect(await v2Upstreams(fwd, 'v1')).toBeGreaterThanOrEqual(1);
    expect(await v2Upstreams(fwd, 'v2')).toBe(0);
    expect(logLines(env, 'forwarder ingress protocol')[0]).toMatchObject({ protocol: 'v1' });
  });
});

/** Streams through the forwarder over one TLS HTTP/2 session pool arrive byte-exact. */
describe('forwarder over v2 TLS: 50 × 16 MiB', () => {
  const setup = useEnv({ ingressTls: true });

  it(
    'delivers every transfer sha256-equal with a clean end',
    async () => {
      const env = await setup();
      await endpoint(env, 'tcp://big.x:7707', env.echo.upstreamUrl);
      const port = await freePort();
      await createService(env.sim, internalService('ep-big', { [port]: 'tcp://big.x:7707' }));
      const fwd = await startOver(env, true, { ingress: { protocol: 'v2' } });
      await waitFor(() => fwd.boundPorts().includes(port), 10_000);
      const { results, want } = await fiftyEchoTransfers(
        () => connectTo(port),
        (_s, sawEnd) => (sawEnd ? undefined : 'not a clean end'),
      );
      expect(results).toEqual(Array.from({ length: 50 }, () => want));
      expect(await v2Upstreams(fwd, 'v2')).toBeGreaterThanOrEqual(50);
      expect(
        await metricValue(fwd.registry, 'endpoint_binder_forwarder_ingress_sessions'),
      ).toBeLessThanOrEqual(2);
    },
    budget(300_000),
  );
});
