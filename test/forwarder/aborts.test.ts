import type { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { startServer, waitFor } from '../ingress/helpers.js';
import {
  connectMaybeReset,
  connectTo,
  createService,
  endpoint,
  freePort,
  internalService,
  logLines,
  roundTrip,
  startOver,
  useEnv,
} from './helpers.js';
import { budget } from '../helpers/budget.js';

/**
 * A proxy never lies about a stream: an abort on one side reaches the other as an abort (a reset),
 * and only a clean end ends cleanly. Each case runs over plain TCP and over TLS to the ingress,
 * through the real mock ingress.
 */

/** How a client's stream ended: a clean FIN ('end') or an error such as ECONNRESET. */
interface Ending {
  bytes: number;
  ended: boolean;
  error: string | undefined;
}

function watchEnding(s: Socket): Promise<Ending> {
  return new Promise((resolve) => {
    const e: Ending = { bytes: 0, ended: false, error: undefined };
    s.on('data', (c: Buffer) => (e.bytes += c.length));
    // libuv reports a reset that arrives while bytes are still unread as an end of stream; a
    // zero-byte write tells them apart (it fails on a reset socket). Sockets here are half-open
    // capable: answer a real FIN so the socket closes.
    s.on('end', () => {
      if (s.writableEnded) {
        e.ended = true;
        return;
      }
      s.write(Buffer.alloc(0), (err) => {
        if (err) return;
        e.ended = true;
        s.end();
      });
    });
    s.on('error', (err: NodeJS.ErrnoException) => (e.error ??= err.code ?? err.message));
    s.once('close', () => resolve(e));
    s.resume();
  });
}

for (const tls of [false, true]) {
  describe(`aborts propagate as aborts (${tls ? 'TLS' : 'plain TCP'} to the ingress)`, () => {
    const setup = useEnv({ ingressTls: tls });

    it('an upstream reset after 2 MiB reaches the client as ECONNRESET, never as a clean end', async () => {
      const env = await setup();
      const upstream = await startServer((s) => {
        s.write(Buffer.alloc(2 * 1024 * 1024, 0x61), () => setTimeout(() => s.resetAndDestroy(), 50));
      });
      try {
        await endpoint(env, 'tcp://reset.up:7000', upstream.upstreamUrl);
        const fwd = await startOver(env, tls);
        const port = await freePort();
        await createService(env.sim, internalService('ep-reset-up', { [port]: 'tcp://reset.up:7000' }));
        await waitFor(() => fwd.boundPorts().includes(port), 10_000);
        const s = await connectTo(port);
        s.write('go');
        const e = await watchEnding(s);
        expect(e.ended).toBe(false);
        expect(e.error).toMatch(/^(ECONNRESET|EPIPE)$/);
        await waitFor(() => logLines(env, 'forwarder connection').length === 1, 10_000);
        expect(logLines(env, 'forwarder connection')[0]).toMatchObject({ outcome: 'ingress_error' });
      } finally {
        await upstream.close();
      }
    });

    it('a client reset reaches the upstream as a reset, never as a clean end', async () => {
      const env = await setup();
      let upstreamEnding: Promise<Ending> | undefined;
      const upstream = await startServer((s) => {
        upstreamEnding = watchEnding(s);
        s.on('data', (c: Buffer) => s.write(c));
      });
      try {
        await endpoint(env, 'tcp://reset.client:7001', upstream.upstreamUrl);
        const fwd = await startOver(env, tls);
        const port = await freePort();
        await createService(
          env.sim,
          internalService('ep-reset-client', { [port]: 'tcp://reset.client:7001' }),
        );
        await waitFor(() => fwd.boundPorts().includes(port), 10_000);
        const s = await connectTo(port);
        expect(await roundTrip(s, 'hello')).toBe('hello');
        s.resetAndDestroy();
        const e = await upstreamEnding!;
        expect(e.ended).toBe(false);
        expect(e.error).toMatch(/^(ECONNRESET|EPIPE)$/);
        await waitFor(() => logLines(env, 'forwarder connection').length === 1, 10_000);
        expect(logLines(env, 'forwarder connection')[0]).toMatchObject({ outcome: 'client_error' });
      } finally {
        await upstream.close();
      }
    });

    it('a download cut by the drain timeout is never reported complete: the client gets a reset', async () => {
      const env = await setup();
      // An endless download: writes as fast as the path takes it.
      const upstream = await startServer((s) => {
        const chunk = Buffer.alloc(64 * 1024, 0x62);
        const pump = () => {
          while (!s.destroyed && s.write(chunk));
        };
        s.on('drain', pump);
        s.once('data', pump);
      });
      try {
        await endpoint(env, 'tcp://drain.cut:7002', upstream.upstreamUrl);
        const fwd = await startOver(env, tls, { drain: { delaySeconds: 0, timeoutSeconds: 0.3 } });
        const port = await freePort();
        await createService(env.sim, internalService('ep-drain-cut', { [port]: 'tcp://drain.cut:7002' }));
        await waitFor(() => fwd.boundPorts().includes(port), 10_000);
        const s = await connectTo(port);
        const ending = watchEnding(s);
        s.write('go');
        await waitFor(() => s.bytesRead > 1024 * 1024, 10_000);
        await fwd.shutdown();
        const e = await ending;
        expect(e.ended).toBe(false);
        expect(e.error).toMatch(/^(ECONNRESET|EPIPE)$/);
        expect(logLines(env, 'forwarder connection')[0]).toMatchObject({ outcome: 'shutdown' });
      } finally {
        await upstream.close();
      }
    });

    it('a clean end on both sides ends cleanly on both sides', async () => {
      const env = await setup();
      let upstreamEnding: Promise<Ending> | undefined;
      const upstream = await startServer((s) => {
        s.on('end', () => s.end('bye'));
        upstreamEnding = watchEnding(s);
      });
      try {
        await endpoint(env, 'tcp://clean.end:7003', upstream.upstreamUrl);
        const fwd = await startOver(env, tls);
        const port = await freePort();
        await createService(env.sim, internalService('ep-clean', { [port]: 'tcp://clean.end:7003' }));
        await waitFor(() => fwd.boundPorts().includes(port), 10_000);
        const s = await connectTo(port);
        const ending = watchEnding(s);
        s.end('x'.repeat(1000));
        const e = await ending;
        expect(e).toEqual({ bytes: 3, ended: true, error: undefined });
        expect(await upstreamEnding!).toEqual({ bytes: 1000, ended: true, error: undefined });
      } finally {
        await upstream.close();
      }
    });
  });
}

describe('the TLS ingress stops during a burst of handshakes', () => {
  const setup = useEnv({ ingressTls: true });

  it(
    'every client is closed or served, none hangs, and the forwarder lives on (no uncaught TLS error)',
    { timeout: budget(60_000) },
    async () => {
      const env = await setup();
      await endpoint(env, 'tcp://stopping.x:7004', env.echo.upstreamUrl);
      const fwd = await startOver(env, true, {
        limits: { maxConcurrentDials: 200, maxDialAttempts: 3, prefaceTimeoutMs: 3_000 },
      });
      const port = await freePort();
      await createService(env.sim, internalService('ep-stopping', { [port]: 'tcp://stopping.x:7004' }));
      await waitFor(() => fwd.boundPorts().includes(port), 10_000);
      // 200 clients at once: their dials are in every phase (connect, handshake, preface, reply)
      // when the ingress stops, as with a SIGTERM of the ingress.
      const clients = Array.from({ length: 200 }, () => connectMaybeReset(port));
      const endings = clients.map((s) => {
        s.write('x');
        return watchEnding(s);
      });
      await waitFor(() => fwd.openConnections() > 0, 10_000);
      await env.mock.api.stop();
      const ends = await Promise.all(endings);
      // Nobody was told a clean end without having been served.
      for (const e of ends) if (e.ended) expect(e.bytes).toBeGreaterThan(0);
      await waitFor(() => fwd.openConnections() === 0, 15_000);
      // Still alive and answering: a new client is turned away (no ingress), not left hanging.
      const after = connectMaybeReset(port);
      after.write('y');
      const e = await watchEnding(after);
      expect(e.ended).toBe(false);
      expect(fwd.readiness()).toHaveProperty('ready');
    },
  );
});
