import {
  constants,
  createSecureServer,
  createServer,
  type Http2SecureServer,
  type Http2Server,
  type ServerHttp2Stream,
} from 'node:http2';
import { readFileSync } from 'node:fs';
import { addAbortSignal } from 'node:stream';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { abortStream } from '../../src/api/ingress/reset.js';
import type { Forwarder } from '../../src/forwarder/forwarder.js';
import { devCertificateFiles } from '../helpers/cert-files.js';
import { pollUntil } from '../helpers/wait.js';
import { metricValue } from '../kube/helpers.js';
import { connectTo, createService, freePort, internalService, useEnv } from './helpers.js';

const { NGHTTP2_CANCEL, NGHTTP2_CONNECT_ERROR, NGHTTP2_INTERNAL_ERROR } = constants;

/** RST_STREAM with no END_STREAM before it, as a third-party ingress may send it. */
const RESETS_ALONE = [
  // abortStream (reset.ts): CONNECT_ERROR.
  ['CONNECT_ERROR', (st: ServerHttp2Stream) => abortStream(st), NGHTTP2_CONNECT_ERROR],
  // An AbortError (what abortStream sent before, and an older ingress may): CANCEL.
  ['CANCEL', (st: ServerHttp2Stream) => addAbortSignal(AbortSignal.abort(), st), NGHTTP2_CANCEL],
  // destroy(err): INTERNAL_ERROR.
  ['INTERNAL_ERROR', (st: ServerHttp2Stream) => st.destroy(new Error('gone')), NGHTTP2_INTERNAL_ERROR],
] as const;

/** What the ingress does with one CONNECT stream once it answered 200. */
type Play = (stream: ServerHttp2Stream) => void;

/**
 * A third-party binding ingress (Go's x/net/http2 or nghttp2 in real life), reduced to what these
 * cases need: it answers every CONNECT `:status 200` (docs/ingress.md "v2", "Response") and then
 * plays the test's script on the stream. h2c on plain TCP, ALPN h2 over TLS with the development
 * certificate. It records each stream's end as `close rst <code>`, so a case can wait until its
 * reset is out.
 */
interface ThirdPartyIngress {
  address: string;
  /** The CA file the forwarder trusts over TLS. */
  caFile: string | undefined;
  play: Play;
  /** Every stream it answered, in order (a case acts on one later). */
  streams: ServerHttp2Stream[];
  closes: string[];
  close(): void;
}

async function startThirdPartyIngress(tls: boolean): Promise<ThirdPartyIngress> {
  const files = tls ? await devCertificateFiles('late-reset-ingress-') : undefined;
  const server: Http2Server | Http2SecureServer = files
    ? createSecureServer({ cert: files.cert, key: readFileSync(files.keyFile) })
    : createServer();
  const ingress: ThirdPartyIngress = {
    address: '',
    caFile: files?.certFile,
    play: () => undefined,
    streams: [],
    closes: [],
    close: () => server.close(),
  };
  server.on('stream', (stream) => {
    stream.on('error', () => undefined);
    stream.on('close', () => ingress.closes.push(`close rst ${stream.rstCode}`));
    stream.respond({ ':status': 200 });
    ingress.streams.push(stream);
    ingress.play(stream);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  ingress.address = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  return ingress;
}

/** Everything a client socket did, in order: its bytes, `end` (FIN), `error <code>`, `close hadError=…`. */
interface ClientView {
  data: string;
  seen: string[];
}

function watchClient(s: Socket): ClientView {
  const view: ClientView = { data: '', seen: [] };
  s.on('data', (c: Buffer) => (view.data += c.toString()));
  s.on('end', () => view.seen.push('end'));
  s.on('error', (e: NodeJS.ErrnoException) => view.seen.push(`error ${e.code ?? e.message}`));
  s.on('close', (hadError: boolean) => view.seen.push(`close hadError=${hadError}`));
  return view;
}

const isClose = (e: string): boolean => e.startsWith('close');

/**
 * A reset as the client's kernel reports it: ECONNRESET, or EPIPE for a reset that came after the
 * peer's FIN (Linux's code for a reset in CLOSE_WAIT).
 */
const RESET = /^error (ECONNRESET|EPIPE)$/;

const OUTCOMES = ['closed', 'ingress_error', 'client_error', 'idle_timeout'] as const;

/** The forwarder's accounted outcomes of this port's connections (its connections_total). */
async function outcomes(fwd: Forwarder, port: number): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const outcome of OUTCOMES) {
    const n = await metricValue(fwd.registry, 'endpoint_binder_forwarder_connections_total', {
      port: String(port),
      outcome,
    });
    if (n > 0) counts[outcome] = n;
  }
  return counts;
}

/** Waits until the client's events hold `what`, naming everything the client saw if they never do. */
async function clientSaw(view: ClientView, what: (seen: string[]) => boolean, label: string): Promise<void> {
  await pollUntil(
    `the client to see ${label}`,
    () => ({ data: view.data, seen: [...view.seen] }),
    (v) => what(v.seen),
    { timeoutMs: 10_000 },
  );
}

/**
 * Waits until the forwarder accounted this port's connection as `ingress_error` (it does once both
 * sides are closed: were the reset missed, it would still wait for the client), then lets a client
 * that already read its EOF write once (libuv stops reading at an EOF, so a reset that came after
 * it is met by the next write: that first write fails, where after a mere close it would succeed
 * and the client would see nothing more), and returns everything the client saw once it closed.
 */
async function abortSeen(fwd: Forwarder, port: number, client: Socket, view: ClientView): Promise<string[]> {
  await pollUntil(
    'the forwarder to account the connection as ingress_error',
    async () => ({ forwarder: await outcomes(fwd, port), client: [...view.seen] }),
    (v) => (v.forwarder['ingress_error'] ?? 0) === 1,
    { timeoutMs: 10_000 },
  );
  if (view.seen.includes('end') && client.writable) client.write('after the EOF');
  await clientSaw(view, (s) => s.some(isClose), 'its close');
  expect(await outcomes(fwd, port)).toEqual({ ingress_error: 1 });
  return view.seen;
}

/**
 * A client asks, the ingress answers in full with END_STREAM; resolves once the client read every
 * byte and its EOF.
 */
async function answeredInFull(
  port: number,
  ingress: ThirdPartyIngress,
): Promise<{ client: Socket; view: ClientView }> {
  ingress.play = (stream) => stream.once('data', () => stream.end('the whole answer'));
  const client = await connectTo(port);
  const view = watchClient(client);
  client.write('hello');
  await clientSaw(view, (s) => s.includes('end'), 'the EOF');
  expect(view.data).toBe('the whole answer');
  return { client, view };
}

/**
 * A reset that reaches the forwarder after END_STREAM, in a later read (#27 "abort code"). A
 * third-party ingress may send an upstream's FIN as DATA + END_STREAM and, a TCP read or more
 * later, RST_STREAM (CONNECT_ERROR or CANCEL) when that upstream then resets. The forwarder has
 * passed the FIN on by then; the reset must still reach the client as a reset after its EOF (its
 * next write fails), not leave it half-open or closed cleanly, and the connection is accounted as
 * `ingress_error`. Controls: a clean end both ways stays clean, and a reset without END_STREAM,
 * and one after the client's own FIN (upload), reset the client.
 */
describe.each([false, true])('forwarder over v2: a reset after END_STREAM (tls %s)', (tls) => {
  const setup = useEnv({ installRecord: false });
  const ingresses: ThirdPartyIngress[] = [];
  afterEach(() => {
    for (const ingress of ingresses.splice(0)) ingress.close();
  });

  /** A forwarder whose ingress is a new third-party one, serving one port. */
  async function served(): Promise<{ fwd: Forwarder; port: number; ingress: ThirdPartyIngress }> {
    const env = await setup();
    const ingress = await startThirdPartyIngress(tls);
    ingresses.push(ingress);
    const port = await freePort();
    await createService(env.sim, internalService(`ep-late-${port}`, { [port]: 'tcp://late.x:7800' }));
    const fwd = await env.start({
      ingress: {
        protocol: 'v2',
        address: ingress.address,
        tls,
        ...(ingress.caFile ? { caFile: ingress.caFile } : {}),
      },
    });
    await pollUntil(
      'the port bound',
      () => fwd.boundPorts(),
      (p) => p.includes(port),
      { timeoutMs: 10_000 },
    );
    return { fwd, port, ingress };
  }

  it.each([
    ['CONNECT_ERROR', NGHTTP2_CONNECT_ERROR],
    ['CANCEL', NGHTTP2_CANCEL],
  ])(
    'RST_STREAM %s after END_STREAM, once the client read its EOF: the client reads all, then EOF, then a reset',
    async (_name, code) => {
      const { fwd, port, ingress } = await served();
      const { client, view } = await answeredInFull(port, ingress);
      // The forwarder has passed the END_STREAM on as a FIN: the reset comes in a later read, as
      // one a third-party ingress sends when its upstream resets after its FIN.
      ingress.streams[0]!.close(code);
      await pollUntil(
        'the ingress to have sent its reset',
        () => [...ingress.closes],
        (c) => c.length > 0,
      );
      expect(ingress.closes).toEqual([`close rst ${code}`]);
      const seen = await abortSeen(fwd, port, client, view);
      expect(seen.length, `client saw ${seen.join(', ')}`).toBe(3);
      expect(seen[0], `client saw ${seen.join(', ')}`).toBe('end');
      expect(seen[1], `client saw ${seen.join(', ')}`).toMatch(RESET);
      expect(seen[2], `client saw ${seen.join(', ')}`).toBe('close hadError=true');
    },
  );

  it('control: END_STREAM and the client half-closes too: a clean end both ways, no reset', async () => {
    const { fwd, port, ingress } = await served();
    const { client, view } = await answeredInFull(port, ingress);
    client.end();
    await clientSaw(view, (s) => s.some(isClose), 'its close');
    expect(view.seen).toEqual(['end', 'close hadError=false']);
    await pollUntil(
      'the ingress stream to close',
      () => [...ingress.closes],
      (c) => c.length > 0,
    );
    expect(ingress.closes).toEqual([`close rst ${constants.NGHTTP2_NO_ERROR}`]);
    const counted = await pollUntil(
      'the forwarder to account the connection',
      () => outcomes(fwd, port),
      (o) => Object.keys(o).length > 0,
    );
    expect(counted).toEqual({ closed: 1 });
  });

  it.each(RESETS_ALONE)(
    'RST_STREAM %s alone, after the client read part of the answer: the client reads a reset, no EOF',
    async (_name, abort, code) => {
      const { fwd, port, ingress } = await served();
      ingress.play = (stream) => stream.once('data', () => stream.write('part of it'));
      const client = await connectTo(port);
      const view = watchClient(client);
      client.write('hello');
      await pollUntil(
        'the client to read the part',
        () => view.data,
        (d) => d === 'part of it',
      );
      abort(ingress.streams[0]!);
      const seen = await abortSeen(fwd, port, client, view);
      expect(ingress.closes).toEqual([`close rst ${code}`]);
      expect(seen, `client saw ${seen.join(', ')}`).toEqual(['error ECONNRESET', 'close hadError=true']);
    },
  );

  it.each([
    // end(data) and close(code) in one turn: DATA without END_STREAM, then RST_STREAM 0x0a alone
    // (seen on the wire with a frame tap).
    [
      'CONNECT_ERROR alone',
      (st: ServerHttp2Stream) => (st.end('part of it'), st.close(NGHTTP2_CONNECT_ERROR)),
    ],
    // close(code) once a write flushed: DATA, END_STREAM and RST_STREAM back to back.
    [
      'CONNECT_ERROR right after END_STREAM',
      (st: ServerHttp2Stream) => st.write('part of it', () => st.close(NGHTTP2_CONNECT_ERROR)),
    ],
  ] as const)('RST_STREAM %s with the answer: the client is reset', async (_name, answer) => {
    const { fwd, port, ingress } = await served();
    ingress.play = (stream) => stream.once('data', () => answer(stream));
    const client = await connectTo(port);
    const view = watchClient(client);
    client.write('hello');
    const seen = await abortSeen(fwd, port, client, view);
    expect(ingress.closes).toEqual([`close rst ${NGHTTP2_CONNECT_ERROR}`]);
    // The client may read an EOF first: the reset may reach the forwarder in a later read than
    // the END_STREAM (the first case), and a Node client's libuv reports a reset that arrives
    // with bytes still unread as an EOF (reset.ts onCleanEnd). The reset comes after it either way.
    const tail = seen[0] === 'end' ? seen.slice(1) : seen;
    expect(tail.length, `client saw ${seen.join(', ')}`).toBe(2);
    expect(tail[0], `client saw ${seen.join(', ')}`).toMatch(RESET);
    expect(tail[1], `client saw ${seen.join(', ')}`).toBe('close hadError=true');
  });

  it.each(RESETS_ALONE)(
    'upload: the client sends FIN, the ingress gets END_STREAM and 100 ms later RST_STREAM %s: the client is reset',
    async (_name, abort, code) => {
      const { fwd, port, ingress } = await served();
      let received = '';
      ingress.play = (stream) => {
        stream.on('data', (c: Buffer) => (received += c.toString()));
        stream.once('end', () => setTimeout(() => abort(stream), 100));
      };
      const client = await connectTo(port);
      const view = watchClient(client);
      client.end('the whole upload');
      const seen = await abortSeen(fwd, port, client, view);
      expect(received).toBe('the whole upload');
      expect(ingress.closes).toEqual([`close rst ${code}`]);
      // Still reading (only its write half is closed), the client meets the reset as it comes.
      expect(seen.length, `client saw ${seen.join(', ')}`).toBe(2);
      expect(seen[0], `client saw ${seen.join(', ')}`).toMatch(RESET);
      expect(seen[1], `client saw ${seen.join(', ')}`).toBe('close hadError=true');
    },
  );
});
