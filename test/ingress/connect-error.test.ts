import {
  constants,
  connect as h2connect,
  createSecureServer as h2secureServer,
  createServer as h2server,
  type ClientHttp2Stream,
  type ServerHttp2Stream,
} from 'node:http2';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { connect as tlsConnect, createServer as tlsServer } from 'node:tls';
import { afterEach, describe, expect, it } from 'vitest';
import { abortStream } from '../../src/api/ingress/reset.js';
import { devCertificate } from '../../src/net/dev-cert.js';
import { budget } from '../helpers/budget.js';
import { pollUntil } from '../helpers/wait.js';
import {
  abortProblem,
  CLIENT_PREFACE,
  connectHeaders,
  describeFrame,
  FLAG,
  FRAME,
  FrameReader,
  MAX_WINDOW,
  okHeaders,
  settings,
  windowUpdate,
  type Frame,
} from './raw-h2.js';

/**
 * Our abort of a CONNECT stream, seen on the wire (docs/ingress.md "v2"): `abortStream` must send
 * RST_STREAM CONNECT_ERROR (RFC 9113 §8.5: a proxy whose TCP connection was reset) and never an
 * END_STREAM before it, which the peer could take for a clean end. node:http2's own view cannot
 * show that order, so a raw HTTP/2 peer of this test's own (./raw-h2.ts) faces node:http2 and
 * records every frame: once with node:http2 as the server (the mock ingress's side) and once as
 * the client (the forwarder's side).
 *
 * The hard case is an abort while megabytes are still on their way: node:http2 flushes what it
 * holds for the session before it submits an RST_STREAM, so an END_STREAM that was queued (by
 * `stream.close(code)`, which ends the writable side first) would go out ahead of the reset. Each
 * stream writes 0 B to 4 MiB and is aborted in the same turn, the next one, a little later, or as
 * node:http2 took its last byte; with the window wide open (the bytes are being written when the
 * abort comes) and with the default window (the bytes are still buffered in node:http2); over
 * plain TCP and over TLS (the socket under the session writes differently).
 */

const STREAMS = 200;
const AT_ONCE = 20;
const SIZES = [0, 1024, 256 * 1024, 4 * 1024 * 1024];
const WHENS = ['same turn', 'next turn', 'a little later', 'as written'] as const;
const BYTES = Buffer.alloc(Math.max(...SIZES), 0x61);
const { NGHTTP2_CONNECT_ERROR } = constants;
/**
 * node:http2 refuses new streams (RST_STREAM ENHANCE_YOUR_CALM) once a session holds more than
 * its memory budget (10 MB by default), and 20 streams of up to 4 MiB each hold more.
 */
const SESSION_MEMORY_MB = 1000;

type When = (typeof WHENS)[number];
interface Plan {
  bytes: number;
  when: When;
}
type Window = 'open' | 'default';
type Transport = 'tcp' | 'tls';
const CASES = (['tcp', 'tls'] as const).flatMap((t) =>
  (['open', 'default'] as const).map((w) => [t, w] as const),
);

/** The nth stream's plan: every size with every moment, in turn. */
function planOf(n: number): Plan {
  return {
    bytes: SIZES[n % SIZES.length] ?? 0,
    when: WHENS[Math.floor(n / SIZES.length) % WHENS.length] ?? 'same turn',
  };
}

/**
 * Writes the plan's bytes (not ending the stream) and aborts the stream at the plan's moment; 'as
 * written' is when node:http2 took the last byte (the stream's queue just ran dry), or 20 ms on
 * where the window holds them back.
 */
function writeThenAbort(stream: ClientHttp2Stream | ServerHttp2Stream, plan: Plan): void {
  const abort = () => abortStream(stream);
  if (plan.when === 'as written') {
    stream.write(BYTES.subarray(0, plan.bytes), abort);
    setTimeout(abort, 20);
    return;
  }
  if (plan.bytes > 0) stream.write(BYTES.subarray(0, plan.bytes));
  if (plan.when === 'same turn') abort();
  else if (plan.when === 'next turn') setImmediate(abort);
  else setTimeout(abort, 2);
}

/** A stream's frames on one line, runs of DATA frames folded: `HEADERS DATA×4(65535 B) RST_STREAM(0x8)`. */
function summary(frames: Frame[]): string {
  const words: string[] = [];
  let run = { count: 0, bytes: 0 };
  const flush = () => {
    if (run.count > 0) words.push(`DATA×${run.count}(${run.bytes} B)`);
    run = { count: 0, bytes: 0 };
  };
  for (const f of frames) {
    if (f.type === FRAME.DATA && !(f.flags & FLAG.END_STREAM))
      run = { count: run.count + 1, bytes: run.bytes + f.length };
    else {
      flush();
      words.push(describeFrame(f));
    }
  }
  flush();
  return words.join(' ');
}

/**
 * The streams whose frames are not an abort with CONNECT_ERROR alone, with their plans and frames:
 * how many, and the first few (a failure names what it saw without printing 200 lines).
 */
function problems(reader: FrameReader, plans: Map<number, Plan>): string[] {
  const all = everyProblem(reader, plans);
  return all.length === 0 ? [] : [`${all.length} of ${plans.size} streams`, ...all.slice(0, 8)];
}

function everyProblem(reader: FrameReader, plans: Map<number, Plan>): string[] {
  const out: string[] = [];
  for (const [id, plan] of plans) {
    const frames = reader.on(id);
    const problem = abortProblem(frames, NGHTTP2_CONNECT_ERROR);
    if (problem) out.push(`stream ${id} (${plan.bytes} B, ${plan.when}): ${problem}; saw ${summary(frames)}`);
  }
  return out;
}

/** Waits until every stream in `ids` got its RST_STREAM (or the connection went away). */
async function resetsOf(reader: FrameReader, ids: number[], socket: Socket): Promise<void> {
  await pollUntil(
    `an RST_STREAM on streams ${ids[0]}..${ids.at(-1)}`,
    () =>
      ids
        .filter((id) => !reader.on(id).some((f) => f.type === FRAME.RST_STREAM))
        .map((id) => `stream ${id}: ${summary(reader.on(id))}`),
    (missing) => missing.length === 0 || socket.destroyed,
    { timeoutMs: 20_000 },
  );
}

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

interface Listener {
  listen(port: number, host: string, cb: () => void): unknown;
  address(): AddressInfo | string | null;
  close(): unknown;
}

async function listening(server: Listener): Promise<number> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanups.push(() => server.close());
  return (server.address() as AddressInfo).port;
}

/** A node:http2 server (h2c, or TLS with ALPN h2 and the development certificate). */
async function nodeServer(transport: Transport, memoryMb?: number) {
  const options = memoryMb === undefined ? {} : { maxSessionMemory: memoryMb };
  if (transport === 'tcp') return h2server(options);
  const { cert, key } = await devCertificate();
  return h2secureServer({ ...options, cert, key });
}

/** The raw peer's client socket to `port`, its frames recorded by the returned reader. */
async function rawClient(
  port: number,
  transport: Transport,
): Promise<{ socket: Socket; reader: FrameReader }> {
  const socket =
    transport === 'tcp'
      ? connect({ port, host: '127.0.0.1' })
      : tlsConnect({ port, host: '127.0.0.1', ca: (await devCertificate()).cert, ALPNProtocols: ['h2'] });
  cleanups.push(() => socket.destroy());
  socket.on('error', () => undefined);
  const reader = new FrameReader(socket);
  socket.on('data', (c: Buffer) => reader.push(c));
  return { socket, reader };
}

/**
 * The raw peer as a server: its first connection, answering each stream's HEADERS with
 * `:status 200`. Resolves with its port and, once node:http2 connects, the socket and reader.
 */
async function rawServer(
  transport: Transport,
  window: Window,
): Promise<{ port: number; peer: Promise<{ socket: Socket; reader: FrameReader }> }> {
  const { cert, key } = await devCertificate();
  const server = transport === 'tcp' ? createServer() : tlsServer({ cert, key, ALPNProtocols: ['h2'] });
  const peer = new Promise<{ socket: Socket; reader: FrameReader }>((resolve) =>
    server.once(transport === 'tcp' ? 'connection' : 'secureConnection', (socket: Socket) => {
      cleanups.push(() => socket.destroy());
      socket.on('error', () => undefined);
      const reader = new FrameReader(socket, (f) => {
        if (f.type === FRAME.HEADERS) socket.write(okHeaders(f.stream));
      });
      afterPreface(socket, (c) => reader.push(c));
      socket.write(opening(window));
      resolve({ socket, reader });
    }),
  );
  return { port: await listening(server), peer };
}

/** The frames of the first SETTINGS exchange: ours, and with the window open, the connection's window too. */
function opening(window: Window): Buffer {
  if (window === 'default') return settings(65_535);
  return Buffer.concat([settings(MAX_WINDOW), windowUpdate(0, MAX_WINDOW - 65_535)]);
}

describe('abortStream on the wire: RST_STREAM CONNECT_ERROR, no END_STREAM before it', () => {
  it.each(CASES)(
    'node:http2 server stream (the mock ingress side), %s, %s window: 200 streams of 0 B to 4 MiB',
    async (transport, window) => {
      const server = await nodeServer(transport, SESSION_MEMORY_MB);
      const plans = new Map<number, Plan>();
      server.on('stream', (stream) => {
        stream.on('error', () => undefined);
        stream.respond({ ':status': 200 });
        const id = stream.id ?? 0;
        const plan = planOf((id - 1) / 2);
        plans.set(id, plan);
        writeThenAbort(stream, plan);
      });
      const { socket, reader } = await rawClient(await listening(server), transport);
      socket.write(Buffer.concat([CLIENT_PREFACE, opening(window)]));
      for (let first = 0; first < STREAMS; first += AT_ONCE) {
        const ids = Array.from({ length: AT_ONCE }, (_, i) => 2 * (first + i) + 1);
        socket.write(Buffer.concat(ids.map((id) => connectHeaders(id, '127.0.0.1:9'))));
        await resetsOf(reader, ids, socket);
      }
      expect(plans.size, 'streams the server saw').toBe(STREAMS);
      expect(problems(reader, plans)).toEqual([]);
    },
    budget(60_000),
  );

  it('node:http2 server stream aborted before it answered: RST_STREAM CONNECT_ERROR alone, no implicit 200', async () => {
    const server = await nodeServer('tcp');
    server.on('stream', (stream) => {
      stream.on('error', () => undefined);
      abortStream(stream);
    });
    const { socket, reader } = await rawClient(await listening(server), 'tcp');
    const ids = Array.from({ length: AT_ONCE }, (_, i) => 2 * i + 1);
    socket.write(
      Buffer.concat([CLIENT_PREFACE, opening('open'), ...ids.map((id) => connectHeaders(id, '127.0.0.1:9'))]),
    );
    await resetsOf(reader, ids, socket);
    const seen = ids.map((id) => `stream ${id}: ${summary(reader.on(id))}`);
    expect(seen).toEqual(ids.map((id) => `stream ${id}: RST_STREAM(0xa)`));
  });

  it.each(CASES)(
    'node:http2 client stream (the forwarder side), %s, %s window: 200 streams of 0 B to 4 MiB',
    async (transport, window) => {
      const { port, peer } = await rawServer(transport, window);
      const session = h2connect(`${transport === 'tcp' ? 'http' : 'https'}://127.0.0.1:${port}`, {
        maxSessionMemory: SESSION_MEMORY_MB,
        ca: (await devCertificate()).cert,
      });
      session.on('error', () => undefined);
      cleanups.push(() => session.destroy());
      const { socket, reader } = await peer;
      const plans = new Map<number, Plan>();
      for (let first = 0; first < STREAMS; first += AT_ONCE) {
        const opened = Array.from({ length: AT_ONCE }, (_, i) => {
          const stream = session.request(
            { ':method': 'CONNECT', ':authority': '127.0.0.1:9' },
            { endStream: false },
          );
          stream.on('error', () => undefined);
          stream.once('response', () => writeThenAbort(stream, planOf(first + i)));
          // 'ready' (the stream has its id) comes at once on a connected session, later on one still connecting.
          return stream.pending
            ? new Promise<number>((r) => stream.once('ready', () => r(stream.id ?? 0)))
            : Promise.resolve(stream.id ?? 0);
        });
        const ids = await Promise.all(opened);
        ids.forEach((id, i) => plans.set(id, planOf(first + i)));
        await resetsOf(reader, ids, socket);
      }
      expect(plans.size, 'streams the client opened').toBe(STREAMS);
      expect(problems(reader, plans)).toEqual([]);
    },
    budget(60_000),
  );

  it('node:http2 client stream aborted while its session still connects: never sent, no error; the next stream resets with CONNECT_ERROR', async () => {
    const { port, peer } = await rawServer('tcp', 'open');
    const session = h2connect(`http://127.0.0.1:${port}`);
    const sessionErrors: string[] = [];
    session.on('error', (e) => sessionErrors.push(String(e)));
    cleanups.push(() => session.destroy());
    // No id yet: the write, close and destroy of abortStream all meet a pending stream.
    const early = session.request(
      { ':method': 'CONNECT', ':authority': '127.0.0.1:9' },
      { endStream: false },
    );
    early.on('error', () => undefined);
    expect(early.pending, 'the session was still connecting').toBe(true);
    abortStream(early);
    const { socket, reader } = await peer;
    if (session.connecting) await new Promise((r) => session.once('connect', r));
    const next = session.request({ ':method': 'CONNECT', ':authority': '127.0.0.1:9' }, { endStream: false });
    next.on('error', () => undefined);
    await new Promise((r) => next.once('response', r));
    abortStream(next);
    const id = next.id ?? 0;
    await resetsOf(reader, [id], socket);
    const opened = [...new Set(reader.frames.filter((f) => f.type === FRAME.HEADERS).map((f) => f.stream))];
    expect(opened, 'streams whose HEADERS reached the peer').toEqual([id]);
    expect(summary(reader.on(id))).toBe('HEADERS RST_STREAM(0xa)');
    expect(early.destroyed).toBe(true);
    expect(sessionErrors).toEqual([]);
  });
});

/** Hands `socket`'s bytes to `push` once the client preface (24 bytes) went by. */
function afterPreface(socket: Socket, push: (c: Buffer) => void): void {
  let seen = 0;
  socket.on('data', (c: Buffer) => {
    const skip = Math.min(c.length, CLIENT_PREFACE.length - seen);
    seen += skip;
    if (c.length > skip) push(c.subarray(skip));
  });
}
