import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { TestMock } from '../helpers/mock-api.js';
import { conditionOf, pollUntil } from '../helpers/wait.js';

/** A loopback TCP server with its open sockets tracked, so close() never waits on a client. */
export interface TestServer {
  port: number;
  upstreamUrl: string;
  close(): Promise<void>;
}

export async function startServer(onConn: (s: Socket) => void, port = 0): Promise<TestServer> {
  const sockets = new Set<Socket>();
  const server: Server = createServer({ allowHalfOpen: true }, (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => undefined);
    onConn(s);
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const bound = (server.address() as AddressInfo).port;
  return {
    port: bound,
    upstreamUrl: `tcp://127.0.0.1:${bound}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Echoes every byte back and ends its write side when the client ends. */
export function startEcho(): Promise<TestServer> {
  return startServer((s) => s.pipe(s));
}

/** A port that was just open and is now closed: connecting to it is refused. */
export async function closedPort(): Promise<number> {
  const s = await startServer(() => undefined);
  await s.close();
  return s.port;
}

export async function createEndpoint(
  t: TestMock,
  url: string,
  extra: { upstream_url?: string; pooling_enabled?: boolean } = {},
  apiKey?: string,
): Promise<{ id: string }> {
  const res = await t.raw('POST', '/endpoints', {
    body: { url, bindings: ['kubernetes'], ...extra },
    ...(apiKey ? { apiKey } : {}),
  });
  if (res.status !== 201) throw new Error(`POST /endpoints ${res.status}: ${res.text}`);
  return res.json as { id: string };
}

/** Reads until the stream ends (or closes), bounded by `timeoutMs`. */
export function readAll(s: NodeJS.ReadableStream & { destroy(): void }, timeoutMs = 10_000): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      s.destroy();
      reject(new Error(`readAll: no end within ${timeoutMs} ms; got "${Buffer.concat(chunks).toString()}"`));
    }, timeoutMs);
    s.on('data', (c: Buffer) => chunks.push(c));
    const done = () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks));
    };
    s.once('end', done);
    s.once('close', done);
    s.once('error', () => undefined);
    s.resume();
  });
}

/** Reads until `n` bytes arrived (or the stream ends), bounded by `timeoutMs`; leaves the rest flowing off. */
export function readBytes(s: Socket, n: number, timeoutMs = 10_000): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let got = 0;
    const finish = (err?: Error) => {
      clearTimeout(timer);
      s.off('data', onData);
      s.off('end', onEnd);
      s.pause();
      if (err) reject(err);
      else resolve(Buffer.concat(chunks));
    };
    const onData = (c: Buffer) => {
      chunks.push(c);
      got += c.length;
      if (got >= n) finish();
    };
    const onEnd = () => finish(new Error(`stream ended after ${got} of ${n} bytes`));
    const timer = setTimeout(
      () => finish(new Error(`readBytes: ${got} of ${n} bytes in ${timeoutMs} ms`)),
      timeoutMs,
    );
    s.on('data', onData);
    s.once('end', onEnd);
    s.resume();
  });
}

/** Connects with a plain socket, writes `data` (optionally ending), and returns all it reads until close. */
export async function rawExchange(
  address: string,
  data: string | Buffer | undefined,
  opts: { end?: boolean; timeoutMs?: number } = {},
): Promise<string> {
  const [host, port] = address.split(':') as [string, string];
  const s = connect({ host, port: Number(port), allowHalfOpen: true });
  await new Promise<void>((resolve, reject) => {
    s.once('connect', resolve);
    s.once('error', reject);
  });
  const all = readAll(s, opts.timeoutMs ?? 10_000);
  if (data !== undefined) s.write(data);
  if (opts.end) s.end();
  const out = await all;
  s.destroy();
  return out.toString('utf8');
}

/** Polls `check` every 20 ms until it returns true, at most `timeoutMs` (scaled; test/helpers/wait.ts). */
export async function waitFor(
  check: () => boolean | Promise<boolean>,
  timeoutMs = 5000,
  what = conditionOf(check),
): Promise<void> {
  await pollUntil(what, check, (v) => v, { timeoutMs, intervalMs: 20, onError: 'throw' });
}

/**
 * A loopback upstream that never accepts: a child process listens with a backlog of 1 and then
 * blocks its event loop (asleep, not spinning: no CPU taken from the test), and two connections
 * fill the accept queue, so the kernel drops further SYNs and a new connection neither succeeds
 * nor fails until the caller's timeout.
 */
export async function startUnresponsiveUpstream(blockMs = 20_000): Promise<{ port: number; close(): void }> {
  const child = spawn(
    process.execPath,
    [
      '-e',
      `const s = require('node:net').createServer();
       s.listen({ port: 0, host: '127.0.0.1', backlog: 1 }, () => {
         process.stdout.write(s.address().port + '\\n');
         Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ${blockMs}); process.exit(0);
       });`,
    ],
    { stdio: ['ignore', 'pipe', 'ignore'] },
  );
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout.once('data', (d: Buffer) => resolve(Number(d.toString().trim())));
    child.once('error', reject);
  });
  const fillers: Socket[] = [];
  for (let i = 0; i < 2; i++) {
    const s = connect(port, '127.0.0.1');
    s.on('error', () => undefined);
    fillers.push(s);
    await new Promise<void>((resolve) => {
      s.once('connect', () => resolve());
      setTimeout(resolve, 500);
    });
  }
  return {
    port,
    close() {
      for (const s of fillers) s.destroy();
      child.kill('SIGKILL');
    },
  };
}

/** A connection that never sends a byte, from a chosen loopback source address. */
export interface SilentSocket {
  socket: Socket;
  /** Everything the ingress sent (a refusal or eviction reply, if any). */
  received(): string;
  readonly closed: boolean;
  whenClosed: Promise<void>;
}

/**
 * Opens a silent connection to `address` from `localAddress` (any of 127.0.0.0/8 works on Linux,
 * so one test can play several sources). Resolves once connected.
 */
export async function openSilent(address: string, localAddress: string): Promise<SilentSocket> {
  const [host, port] = address.split(':') as [string, string];
  const socket = connect({ host, port: Number(port), localAddress });
  const chunks: Buffer[] = [];
  let closed = false;
  socket.on('data', (c: Buffer) => chunks.push(c));
  socket.on('error', () => undefined);
  const whenClosed = new Promise<void>((resolve) =>
    socket.once('close', () => {
      closed = true;
      resolve();
    }),
  );
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('close', () =>
      reject(new Error(`silent socket from ${localAddress} closed before connecting`)),
    );
  });
  return {
    socket,
    received: () => Buffer.concat(chunks).toString('utf8'),
    get closed() {
      return closed;
    },
    whenClosed,
  };
}

/**
 * 50 echo transfers of 16 MiB, 5 at a time, each on a stream from `open`: for each, the sha256 of
 * what came back when it ended cleanly (`clean` says so at 'close', given whether 'end' came),
 * else how it ended. `want` is the sha256 of what was sent.
 */
export async function fiftyEchoTransfers<S extends Duplex>(
  open: () => Promise<S>,
  clean: (s: S, sawEnd: boolean) => string | undefined,
): Promise<{ results: string[]; want: string }> {
  const chunk = randomBytes(1024 * 1024);
  const MIB = 16;
  const want = createHash('sha256');
  for (let i = 0; i < MIB; i++) want.update(chunk);
  const one = async (): Promise<string> => {
    const s = await open();
    const hash = createHash('sha256');
    const done = new Promise<string>((resolve) => {
      let ended = false;
      let error = '';
      s.on('data', (c: Buffer) => hash.update(c));
      s.once('end', () => (ended = true));
      s.on('error', (e: NodeJS.ErrnoException) => (error ||= e.code ?? e.message));
      s.once('close', () => resolve(clean(s, ended && !error) ?? hash.digest('hex')));
    });
    for (let i = 0; i < MIB; i++) {
      if (!s.write(chunk)) await new Promise((r) => s.once('drain', r));
    }
    s.end();
    return done;
  };
  const results: string[] = [];
  for (let round = 0; round < 10; round++) results.push(...(await Promise.all([1, 2, 3, 4, 5].map(one))));
  return { results, want: want.digest('hex') };
}
