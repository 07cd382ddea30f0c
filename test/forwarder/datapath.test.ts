import { createHash } from 'node:crypto';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { writeFile, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type AddressInfo } from 'node:net';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { DEFAULT_SHARED_WINDOW, DEFAULT_STREAM_WINDOW } from '../../src/api/ingress/v2-protocol.js';
import { pinnedAtMost } from '../../src/api/ingress/window-share.js';
import { metricValue } from '../kube/helpers.js';
import { closedPort, readAll, startServer, startUnresponsiveUpstream, waitFor } from '../ingress/helpers.js';
import {
  AUTHTOKEN,
  connectTo,
  createService,
  endpoint,
  freePort,
  internalService,
  logLines,
  roundTrip,
  deleteInstallRecord,
  writeInstallRecord,
  useEnv,
} from './helpers.js';
import { pollUntil } from '../helpers/wait.js';
import { budget } from '../helpers/budget.js';

/** Polls `read` until it returns `want` (10 s at most, scaled); fails with the last value seen. */
async function waitForValue(read: () => Promise<number>, want: number): Promise<void> {
  await pollUntil(`the value ${want}`, read, (v) => v === want, {
    timeoutMs: 10_000,
    intervalMs: 20,
    onError: 'throw',
  });
}

describe('forwarder data path (kubesim + mock ingress + loopback upstream)', () => {
  const setup = useEnv();

  it('answers an HTTP request on the allocated port, reports ready and counts it', async () => {
    const env = await setup();
    const http: HttpServer = createHttpServer((req, res) => {
      res.setHeader('content-type', 'text/plain');
      res.end(`hello from upstream, you asked ${req.method} ${req.url}`);
    });
    await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
    try {
      const upstreamPort = (http.address() as AddressInfo).port;
      await endpoint(env, 'http://web.shop', `http://127.0.0.1:${upstreamPort}`);
      const fwd = await env.start();
      const port = await freePort();
      await createService(env.sim, internalService('ep-web', { [port]: 'http://web.shop:80' }));
      await waitFor(() => fwd.boundPorts().includes(port) && fwd.readiness().ready, 10_000);

      const res = await request(`http://127.0.0.1:${port}/orders?id=7`, { reset: true });
      expect(res.statusCode).toBe(200);
      expect(await res.body.text()).toBe('hello from upstream, you asked GET /orders?id=7');

      const ready = await request(`http://${fwd.httpAddress.address}/readyz`);
      expect(ready.statusCode).toBe(200);
      expect(await ready.body.json()).toEqual({ ready: true, reasons: [] });
      const health = await request(`http://${fwd.httpAddress.address}/healthz`);
      expect(health.statusCode).toBe(200);
      await health.body.text();

      await waitFor(() => logLines(env, 'forwarder connection').length === 1, 10_000);
      expect(logLines(env, 'forwarder connection')[0]).toMatchObject({
        port,
        outcome: 'closed',
        attempts: 1,
      });
      const metrics = await request(`http://${fwd.httpAddress.address}/metrics`);
      const text = await metrics.body.text();
      expect(text).toContain(
        `endpoint_binder_forwarder_connections_total{port="${port}",outcome="closed"} 1`,
      );
      expect(text).toMatch(
        new RegExp(`endpoint_binder_forwarder_bytes_total\\{port="${port}",direction="to_client"\\} [1-9]`),
      );
      expect(text).toContain('endpoint_binder_forwarder_ingress_dial_seconds_count{result="ok"} 1');
    } finally {
      await new Promise<void>((r) => http.close(() => r()));
    }
  });

  it('carries a 64 MiB TCP stream intact both ways (sha256)', { timeout: budget(120_000) }, async () => {
    const env = await setup();
    await endpoint(env, 'tcp://bulk.data:9000', env.echo.upstreamUrl);
    const fwd = await env.start();
    const port = await freePort();
    await createService(env.sim, internalService('ep-bulk', { [port]: 'tcp://bulk.data:9000' }));
    await waitFor(() => fwd.boundPorts().includes(port), 10_000);

    const total = 64 * 1024 * 1024;
    const chunk = Buffer.alloc(1024 * 1024);
    const sent = createHash('sha256');
    const received = createHash('sha256');
    const s = await connectTo(port);
    let got = 0;
    const done = new Promise<void>((resolve, reject) => {
      s.on('data', (c: Buffer) => {
        received.update(c);
        got += c.length;
      });
      s.once('end', resolve);
      s.once('close', () => (got === total ? resolve() : reject(new Error(`closed after ${got} bytes`))));
    });
    for (let i = 0; i < 64; i++) {
      for (let j = 0; j < chunk.length; j += 4)
        chunk.writeUInt32LE(((i * 262144 + j / 4) * 2654435761) >>> 0, j);
      sent.update(chunk);
      if (!s.write(Buffer.from(chunk))) await new Promise((r) => s.once('drain', r));
    }
    s.end();
    await done;
    expect(got).toBe(total);
    expect(received.digest('hex')).toBe(sent.digest('hex'));
    s.destroy();
    await waitFor(() => logLines(env, 'forwarder connection').length === 1, 10_000);
    expect(logLines(env, 'forwarder connection')[0]).toMatchObject({
      outcome: 'closed',
      bytes_in: total,
      bytes_out: total,
    });
    expect(
      await metricValue(fwd.registry, 'endpoint_binder_forwarder_bytes_total', { direction: 'to_ingress' }),
    ).toBe(total);
  });

  it('respects half-close: the client FIN reaches the upstream, which still answers', async () => {
    const env = await setup();
    // Reads until the client's FIN, then answers with what it got, then ends.
    const upstream = await startServer((s) => {
      let n = 0;
      s.on('data', (c: Buffer) => (n += c.length));
      s.on('end', () => {
        s.write(`got ${n} bytes after your FIN`);
        s.end();
      });
    });
    try {
      await endpoint(env, 'tcp://half.close:7000', upstream.upstreamUrl);
      const fwd = await env.start();
      const port = await freePort();
      await createService(env.sim, internalService('ep-half', { [port]: 'tcp://half.close:7000' }));
      await waitFor(() => fwd.boundPorts().includes(port), 10_000);
      const s = await connectTo(port);
      const all = readAll(s);
      s.write('x'.repeat(5000));
      s.end();
      expect((await all).toString()).toBe('got 5000 bytes after your FIN');
      s.destroy();
    } finally {
      await upstream.close();
    }
  });

  it('closes the client promptly when the ingress is down, after bounded retries', async () => {
    const env = await setup();
    const dead = await closedPort();
    const fwd = await env.start({ ingress: { address: `127.0.0.1:${dead}`, tls: false } });
    const port = await freePort();
    await createService(env.sim, internalService('ep-down', { [port]: 'tcp://down.x:1' }));
    await waitFor(() => fwd.boundPorts().includes(port), 10_000);
    const s = await connectTo(port);
    s.write('hello?');
    // Ended by the forwarder (not left hanging): readAll resolves on end/close.
    expect((await readAll(s, 10_000)).length).toBe(0);
    s.destroy();
    await waitFor(() => logLines(env, 'forwarder connection').length === 1, 10_000);
    const line = logLines(env, 'forwarder connection')[0]!;
    expect(line).toMatchObject({ outcome: 'dial_failed', code: 'ERR_793', attempts: 6, level: 40 });
    expect(
      await metricValue(fwd.registry, 'endpoint_binder_forwarder_ingress_refusals_total', {
        code: 'ERR_793',
      }),
    ).toBe(6);
  });

  it('reports the connections waiting for a dial turn in endpoint_binder_forwarder_dials_waiting', async () => {
    const env = await setup();
    // An "ingress" that drops SYNs: the one dial in flight never finishes its handshake, so it
    // holds the only turn (a turn ends once the preface is sent).
    const silent = await startUnresponsiveUpstream(10_000);
    try {
      const fwd = await env.start({
        ingress: { address: `127.0.0.1:${silent.port}`, tls: false },
        limits: { maxConcurrentDials: 1, dialTimeoutMs: 3_000, prefaceTimeoutMs: 3_000 },
      });
      const port = await freePort();
      await createService(env.sim, internalService('ep-wait', { [port]: 'tcp://wait.x:1' }));
      await waitFor(() => fwd.boundPorts().includes(port), 10_000);
      const clients = await Promise.all([0, 1, 2].map(() => connectTo(port)));
      for (const c of clients) c.write('x');
      // One dials, two wait for the turn.
      await waitForValue(() => metricValue(fwd.registry, 'endpoint_binder_forwarder_dials_waiting'), 2);
      // The waiting two give up when prefaceTimeoutMs passes without a turn (ERR_791): none waits then.
      await waitForValue(() => metricValue(fwd.registry, 'endpoint_binder_forwarder_dials_waiting'), 0);
      for (const c of clients) c.destroy();
    } finally {
      silent.close();
    }
  });

  it('closes the client when the mock ingress stops mid-way, and never hangs', async () => {
    const env = await setup();
    await endpoint(env, 'tcp://stop.x:7100', env.echo.upstreamUrl);
    const fwd = await env.start();
    const port = await freePort();
    await createService(env.sim, internalService('ep-stop', { [port]: 'tcp://stop.x:7100' }));
    await waitFor(() => fwd.boundPorts().includes(port), 10_000);
    const s = await connectTo(port);
    expect(await roundTrip(s, 'ping')).toBe('ping');
    const all = readAll(s, 10_000);
    await env.mock.api.stop();
    await all;
    s.destroy();
    const after = await connectTo(port);
    expect((await readAll(after, 10_000)).length).toBe(0);
    after.destroy();
    await waitFor(() => logLines(env, 'forwarder connection').length === 2, 10_000);
    const outcomes = logLines(env, 'forwarder connection').map((l) => l['outcome']);
    expect(outcomes).toContain('dial_failed');
  });

  it('logs a refusal with the ingress code, does not retry it, and closes the client', async () => {
    const env = await setup();
    const fwd = await env.start();
    const port = await freePort();
    // No endpoint with this URL in the account: the ingress answers ERR_721.
    await createService(env.sim, internalService('ep-none', { [port]: 'tcp://nobody.home:5432' }));
    await waitFor(() => fwd.boundPorts().includes(port), 10_000);
    const s = await connectTo(port);
    expect((await readAll(s, 10_000)).length).toBe(0);
    s.destroy();
    await waitFor(() => logLines(env, 'forwarder connection').length === 1, 10_000);
    expect(logLines(env, 'forwarder connection')[0]).toMatchObject({
      outcome: 'refused',
      code: 'ERR_721',
      attempts: 1,
      url: 'tcp://nobody.home:5432',
      level: 40,
    });
    expect(
      await metricValue(fwd.registry, 'endpoint_binder_forwarder_ingress_refusals_total', {
        code: 'ERR_721',
      }),
    ).toBe(1);
    expect(
      await metricValue(fwd.registry, 'endpoint_binder_forwarder_connections_total', { outcome: 'refused' }),
    ).toBe(1);
  });

  it('follows the install record: a changed address is used for new connections and logged as a warning', async () => {
    const env = await setup();
    await endpoint(env, 'tcp://moved.x:7200', env.echo.upstreamUrl);
    const dead = await closedPort();
    await writeInstallRecord(env.sim, { ingressAddress: `127.0.0.1:${dead}`, operatorId: 'k8sop_old' });
    const fwd = await env.start();
    const port = await freePort();
    await createService(env.sim, internalService('ep-moved', { [port]: 'tcp://moved.x:7200' }));
    await waitFor(
      () => fwd.boundPorts().includes(port) && fwd.ingress().address === `127.0.0.1:${dead}`,
      10_000,
    );
    const first = await connectTo(port);
    first.write('anyone?');
    expect((await readAll(first)).length).toBe(0);
    first.destroy();
    await writeInstallRecord(env.sim, { ingressAddress: env.ingress, operatorId: 'k8sop_new' });
    await waitFor(() => logLines(env, 'forwarder ingress address changed').length === 1, 10_000);
    expect(logLines(env, 'forwarder ingress address changed')[0]).toMatchObject({
      level: 40,
      address: env.ingress,
      previous: `127.0.0.1:${dead}`,
      source: 'install-record',
      operator_id: 'k8sop_new',
    });
    const second = await connectTo(port);
    expect(await roundTrip(second, 'now it works')).toBe('now it works');
    second.destroy();
  });

  it('refuses connections without an ingress address (no install record, no override), unready with the reason', async () => {
    const env = await setup();
    await deleteInstallRecord(env.sim);
    const fwd = await env.start();
    const port = await freePort();
    await createService(env.sim, internalService('ep-noing', { [port]: 'tcp://noing.x:1' }));
    await waitFor(() => fwd.boundPorts().includes(port), 10_000);
    await waitFor(
      () => fwd.readiness().reasons.some((r) => r.includes('no binding ingress address')),
      10_000,
    );
    expect(fwd.readiness().ready).toBe(false);
    // A tcp:// port dials at accept: the reset may even beat the client's own connect event.
    const s = connect({ host: '127.0.0.1', port });
    s.on('error', () => undefined);
    expect((await readAll(s)).length).toBe(0);
    s.destroy();
    await waitFor(() => logLines(env, 'forwarder connection').length === 1, 10_000);
    expect(logLines(env, 'forwarder connection')[0]).toMatchObject({ outcome: 'no_ingress', attempts: 0 });
    await waitFor(() => logLines(env, 'forwarder turned clients away').length === 1, 10_000);
    expect(logLines(env, 'forwarder turned clients away')[0]).toMatchObject({
      reason: 'no_ingress',
      count: 1,
    });
  });

  it('never sends the authtoken where a Service annotation points: a forged Service cannot redirect a port', async () => {
    const env = await setup();
    await endpoint(env, 'tcp://target.x:7250', env.echo.upstreamUrl);
    // The attacker's "ingress": records whatever arrives (a preface would carry the authtoken).
    let captured = '';
    const trap = await startServer((s) => s.on('data', (c: Buffer) => (captured += c.toString('latin1'))));
    try {
      const fwd = await env.start();
      const port = await freePort();
      await createService(env.sim, internalService('ep-target', { [port]: 'tcp://target.x:7250' }));
      // A second Service with the install's labels, the same port and URL, named to sort first,
      // pointing the old ingress annotation at the trap.
      const forged = internalService('a-forged', { [port]: 'tcp://target.x:7250' });
      forged.metadata.annotations!['endpoint-binder.io/ingress'] = `127.0.0.1:${trap.port}`;
      await createService(env.sim, forged);
      await waitFor(() => fwd.boundPorts().includes(port), 10_000);
      await new Promise((r) => setTimeout(r, 300)); // both Services in the cache
      const s = await connectTo(port);
      expect(await roundTrip(s, 'to the real ingress')).toBe('to the real ingress');
      s.destroy();
      expect(captured).toBe('');
      expect(fwd.ingress()).toMatchObject({ address: env.ingress, source: 'install-record' });
    } finally {
      await trap.close();
    }
  });

  it('closes idle connections after limits.idleTimeoutMs', async () => {
    const env = await setup();
    await endpoint(env, 'tcp://idle.x:7300', env.echo.upstreamUrl);
    const fwd = await env.start({ limits: { idleTimeoutMs: 300 } });
    const port = await freePort();
    await createService(env.sim, internalService('ep-idle', { [port]: 'tcp://idle.x:7300' }));
    await waitFor(() => fwd.boundPorts().includes(port), 10_000);
    const s = await connectTo(port);
    expect(await roundTrip(s, 'hi')).toBe('hi');
    await readAll(s, 10_000);
    s.destroy();
    await waitFor(() => logLines(env, 'forwarder connection').length === 1, 10_000);
    expect(logLines(env, 'forwarder connection')[0]).toMatchObject({ outcome: 'idle_timeout' });
  });

  it('never logs the authtoken, even at trace level and on failures', async () => {
    const env = await setup();
    await endpoint(env, 'tcp://secret.x:7400', env.echo.upstreamUrl);
    const fwd = await env.start({ logLevel: 'trace' });
    const port = await freePort();
    const other = await freePort();
    await createService(
      env.sim,
      internalService('ep-secret', { [port]: 'tcp://secret.x:7400', [other]: 'tcp://secret.x:7401' }),
    );
    await waitFor(() => fwd.boundPorts().length === 2, 10_000);
    const ok = await connectTo(port);
    expect(await roundTrip(ok, 'x')).toBe('x');
    ok.destroy();
    const refused = await connectTo(other);
    await readAll(refused);
    refused.destroy();
    await fwd.stop();
    await waitFor(() => logLines(env, 'forwarder connection').length === 2, 10_000);
    expect(env.logs.raw.length).toBeGreaterThan(5);
    for (const line of env.logs.raw) expect(line).not.toContain(AUTHTOKEN);
  });
});

describe('forwarder to a TLS ingress', () => {
  const setup = useEnv({ ingressTls: true });

  it('trusts ingress.caFile and refuses an untrusted certificate', async () => {
    const env = await setup();
    await endpoint(env, 'tcp://tls.x:7500', env.echo.upstreamUrl);
    const dir = await mkdtemp(join(tmpdir(), 'fwd-ca-'));
    const caFile = join(dir, 'ca.pem');
    await writeFile(caFile, env.mock.api.ingressCaPem!);
    const trusting = await env.start({ ingress: { tls: true, caFile } });
    const port = await freePort();
    await createService(env.sim, internalService('ep-tls', { [port]: 'tcp://tls.x:7500' }));
    await waitFor(() => trusting.boundPorts().includes(port), 10_000);
    const s = await connectTo(port);
    expect(await roundTrip(s, 'over tls')).toBe('over tls');
    s.destroy();
    await trusting.stop();

    // The system CAs do not know the development certificate: the dial fails, the client is closed.
    const untrusting = await env.start({ ingress: { tls: true } });
    await waitFor(() => untrusting.boundPorts().includes(port), 10_000);
    const t = await connectTo(port);
    expect((await readAll(t)).length).toBe(0);
    t.destroy();
    await waitFor(
      () => logLines(env, 'forwarder connection').some((l) => l['outcome'] === 'dial_failed'),
      10_000,
    );
    // A refused certificate has its own code and is not retried (it would fail again).
    expect(logLines(env, 'forwarder connection').find((l) => l['outcome'] === 'dial_failed')).toMatchObject({
      code: 'ERR_795',
      attempts: 1,
    });
    expect(
      await metricValue(untrusting.registry, 'endpoint_binder_forwarder_ingress_refusals_total', {
        code: 'ERR_795',
      }),
    ).toBe(1);
  });
});

describe('forwarder memory under slow readers', () => {
  const setup = useEnv();

  it(
    'propagates backpressure to a client that never reads instead of buffering',
    { timeout: budget(60_000) },
    async () => {
      const env = await setup();
      await endpoint(env, 'tcp://slow.x:7600', env.echo.upstreamUrl);
      const fwd = await env.start();
      const port = await freePort();
      await createService(env.sim, internalService('ep-slow', { [port]: 'tcp://slow.x:7600' }));
      await waitFor(() => fwd.boundPorts().includes(port), 10_000);
      const s = await connectTo(port);
      s.pause(); // never reads what the echo sends back
      const chunk = Buffer.alloc(64 * 1024, 0x61);
      const limit = 512 * 1024 * 1024;
      let written = 0;
      let stalled = false;
      while (written < limit && !stalled) {
        written += chunk.length;
        if (!s.write(chunk)) {
          stalled = !(await new Promise<boolean>((resolve) => {
            const timer = setTimeout(() => resolve(false), 1_500);
            s.once('drain', () => {
              clearTimeout(timer);
              resolve(true);
            });
          }));
        }
      }
      // The whole chain stalls (kernel buffers full) long before the limit, and the forwarder holds
      // at most the stream's download window in user space (over v2 a stream alone on its session
      // has the session's shared window, window-share.ts) plus two sockets' high-water marks.
      expect(stalled).toBe(true);
      expect(written).toBeLessThan(limit);
      expect(fwd.openConnections()).toBe(1);
      const held = fwd.bufferedBytes();
      const bound =
        pinnedAtMost(1, { floor: DEFAULT_STREAM_WINDOW, shared: DEFAULT_SHARED_WINDOW }) + 128 * 1024;
      expect(
        held,
        `the forwarder holds ${held} bytes for one client that never reads (bound ${bound})`,
      ).toBeLessThanOrEqual(bound);
      s.destroy();
    },
  );
});
