import { spawn, type ChildProcess } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { closedPort, startServer, waitFor } from '../ingress/helpers.js';
import {
  connectTo,
  createService,
  endpoint,
  freePort,
  internalService,
  startOver,
  useEnv,
  type Env,
  PROTOCOLS,
} from './helpers.js';

const REQUEST = 'GET / HTTP/1.1\r\nHost: web.x\r\n\r\n';

/** Everything the client reads, and whether its stream ended cleanly (FIN) or with an error. */
function answer(s: Socket): Promise<{ text: string; ending: string }> {
  return new Promise((resolve) => {
    let text = '';
    let ending = 'closed';
    s.on('data', (c: Buffer) => (text += c.toString()));
    // An HTTP client closes once the response ends (Connection: close).
    s.on('end', () => {
      ending = 'end';
      s.end();
    });
    s.on('error', (e: NodeJS.ErrnoException) => (ending = e.code ?? e.message));
    s.on('close', () => resolve({ text, ending }));
    s.resume();
  });
}

async function served(env: Env, url: string, upstream: string, tls: boolean): Promise<number> {
  await endpoint(env, url, upstream);
  const port = await freePort();
  await createService(env.sim, internalService('ep-web', { [port]: url }));
  const fwd = await startOver(env, tls, { limits: { maxDialAttempts: 2 } });
  await waitFor(() => fwd.boundPorts().includes(port), 10_000);
  return port;
}

/**
 * Where it goes wrong, say so (#27 item 4): an `http://` endpoint's client whose request fails
 * before the first response byte gets `502 Bad Gateway` naming the ERR_7xx code and its meaning,
 * as a complete answer (a clean end). Before, it got a bare reset. A `tcp://` client is still
 * reset: the forwarder does not speak its protocol.
 */
describe.each(PROTOCOLS.flatMap((p) => [false, true].map((tls) => [p, tls] as const)))(
  'forwarder 502 for http endpoints (%s, tls %s)',
  (protocol, tls) => {
    const setup = useEnv({ ingressTls: tls, protocol });

    it('answers 502 naming ERR_730 when the upstream refuses', async () => {
      const env = await setup();
      const port = await served(env, 'http://web.x', `tcp://127.0.0.1:${await closedPort()}`, tls);
      const s = await connectTo(port);
      const got = answer(s);
      s.write(REQUEST);
      const { text, ending } = await got;
      expect(text.split('\r\n')[0]).toBe('HTTP/1.1 502 Bad Gateway');
      expect(text).toContain('X-Binding-Error: ERR_730');
      expect(text.endsWith("\r\n\r\nERR_730: The endpoint's upstream refused the connection.\n")).toBe(true);
      expect(ending).toBe('end');
    });

    it('answers 502 when the upstream resets before its first byte', async () => {
      const env = await setup();
      const resetter = await startServer((s) => s.once('data', () => s.resetAndDestroy()));
      try {
        const port = await served(env, 'http://web.x', resetter.upstreamUrl, tls);
        const s = await connectTo(port);
        const got = answer(s);
        s.write(REQUEST);
        const { text, ending } = await got;
        expect(text.split('\r\n')[0]).toBe('HTTP/1.1 502 Bad Gateway');
        expect(text).toContain('failed before the first response byte');
        expect(ending).toBe('end');
      } finally {
        await resetter.close();
      }
    });

    it('still resets a tcp:// client (no protocol of its own to answer in)', async () => {
      const env = await setup();
      const port = await served(env, 'tcp://raw.x:7700', `tcp://127.0.0.1:${await closedPort()}`, tls);
      const s = await connectTo(port);
      const got = answer(s);
      s.write('hello');
      const { text, ending } = await got;
      expect(text).toBe('');
      expect(ending).toBe('ECONNRESET');
    });
  },
);

/**
 * An upstream that never accepts: a child process listening with a backlog of 1 whose thread
 * sleeps (Atomics.wait: no CPU) from the moment it said its port (a write to a pipe is synchronous
 * on Linux), so it never accepts; its accept queue is then filled, and the kernel drops every
 * further SYN. No fixed sleeps: the queue counts as full once a connect has not completed within
 * a second (loopback handshakes are the kernel's, not held up by a loaded CPU).
 */
async function blackHole(): Promise<{ url: string; child: ChildProcess; fillers: Socket[] }> {
  const script = `const s = require('node:net').createServer();
s.listen({ port: 0, host: '127.0.0.1', backlog: 1 }, () => {
  require('node:fs').writeSync(1, s.address().port + '\\n');
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
});`;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout.once('data', (c: Buffer) => resolve(Number(String(c).trim())));
    child.once('exit', (code) => reject(new Error(`the black hole exited (${code})`)));
  });
  const fillers: Socket[] = [];
  for (let i = 0; i < 16; i++) {
    const s = connect(port, '127.0.0.1').on('error', () => undefined);
    fillers.push(s);
    const connected = await new Promise<boolean>((resolve) => {
      const t = setTimeout(() => resolve(false), 1_000);
      s.once('connect', () => {
        clearTimeout(t);
        resolve(true);
      });
    });
    if (!connected) return { url: `tcp://127.0.0.1:${port}`, child, fillers };
  }
  throw new Error('the black hole accepted 16 connections: its accept queue never filled');
}

/**
 * An upstream that never accepts is the ingress's verdict (ERR_731 after its upstream connect
 * budget), not a silence of the ingress: the forwarder waits longer for a reply than the ingress
 * waits for the upstream (its default dialTimeoutMs 8 s against the ingress's 5 s), so the client
 * is told the fact. Here scaled down: the ingress's budget 500 ms, the forwarder's 1.6 s.
 */
describe.each(PROTOCOLS.flatMap((p) => [false, true].map((tls) => [p, tls] as const)))(
  'forwarder 502 for an upstream that never accepts (%s, tls %s)',
  (protocol, tls) => {
    const setup = useEnv({ ingressTls: tls, protocol, ingress: { dial_timeout_ms: 500 } });
    let hole: Awaited<ReturnType<typeof blackHole>> | undefined;
    afterEach(() => {
      for (const f of hole?.fillers ?? []) f.destroy();
      hole?.child.kill('SIGKILL');
      hole = undefined;
    });

    it('answers 502 naming ERR_731, not a missing reply of the ingress (ERR_791)', async () => {
      const env = await setup();
      hole = await blackHole();
      await endpoint(env, 'http://hole.x', hole.url);
      const port = await freePort();
      await createService(env.sim, internalService('ep-hole', { [port]: 'http://hole.x' }));
      const fwd = await startOver(env, tls, {
        limits: { maxDialAttempts: 1, dialTimeoutMs: 1_600, prefaceTimeoutMs: 2_000 },
      });
      await waitFor(() => fwd.boundPorts().includes(port), 10_000);
      const s = await connectTo(port);
      const got = answer(s);
      s.write(REQUEST);
      const { text } = await got;
      expect(text.split('\r\n')[0], text).toBe('HTTP/1.1 502 Bad Gateway');
      expect(text, text).toContain('X-Binding-Error: ERR_731');
    });
  },
);
