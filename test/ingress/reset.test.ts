import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { resetSocket } from '../../src/api/ingress/reset.js';
import { pollUntil } from '../helpers/wait.js';

/** A loopback pair: the server's socket (the one reset here) and a half-open capable client. */
async function pair(): Promise<{ server: Server; ours: Socket; oursClosed: () => boolean; peer: Socket }> {
  const server = createServer({ allowHalfOpen: true });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const accepted = new Promise<Socket>((r) => server.once('connection', r));
  const peer = connect({
    port: (server.address() as AddressInfo).port,
    host: '127.0.0.1',
    allowHalfOpen: true,
  });
  const ours = await accepted;
  ours.on('error', () => undefined);
  // Its 'close' event, not `closed`: a socket whose reset libuv refused is `closed` and never emits it.
  let closeEmitted = false;
  ours.once('close', () => (closeEmitted = true));
  return { server, ours, oursClosed: () => closeEmitted, peer };
}

/** What the peer read and did, in order: `end`, `error <code>`, `close hadError=…`. */
function watch(s: Socket): { bytes: number; seen: string[] } {
  const view = { bytes: 0, seen: [] as string[] };
  s.on('data', (c: Buffer) => (view.bytes += c.length));
  s.on('end', () => view.seen.push('end'));
  s.on('error', (e: NodeJS.ErrnoException) => view.seen.push(`error ${e.code ?? e.message}`));
  s.on('close', (hadError: boolean) => view.seen.push(`close hadError=${hadError}`));
  return view;
}

const closedIn = (view: { bytes: number; seen: string[] }) =>
  pollUntil(
    'the peer to close',
    () => ({ bytes: view.bytes, seen: [...view.seen] }),
    (v) => v.seen.some((e) => e.startsWith('close')),
  );

/**
 * resetSocket after end() (#27 "abort code": a reset from the ingress after its END_STREAM, which
 * the forwarder had passed on as end()): the peer must see an abort, and the socket must close.
 */
describe('resetSocket after our end()', () => {
  const servers: Server[] = [];
  afterEach(() => {
    for (const s of servers.splice(0)) s.close();
  });

  it('resets a socket whose FIN still waits behind bytes a slow reader has not taken', async () => {
    const { server, ours, oursClosed, peer } = await pair();
    servers.push(server);
    peer.pause();
    const view = watch(peer);
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    let sent = chunk.length;
    while (ours.write(chunk)) sent += chunk.length;
    ours.end();
    expect(ours.writableLength, 'bytes waiting in our socket (the kernel buffers are full)').toBeGreaterThan(
      0,
    );
    resetSocket(ours);
    await pollUntil("our socket's 'close'", oursClosed, Boolean);
    peer.resume();
    // The peer reads what reached it; a Node peer may read the reset as an EOF (libuv reports a
    // reset that arrives with bytes unread that way): its next write then fails. Closed instead
    // of reset, the peer would read a clean EOF after a cut stream, its write would succeed, and
    // it would see nothing more.
    await pollUntil(
      'the peer to read an end or an error',
      () => [...view.seen],
      (s) => s.length > 0,
    );
    if (view.seen[0] === 'end') peer.write('after the EOF');
    await closedIn(view);
    const tail = view.seen[0] === 'end' ? view.seen.slice(1) : view.seen;
    expect(tail, `peer read ${view.bytes} of ${sent} bytes, saw ${view.seen.join(', ')}`).toEqual([
      'error ECONNRESET',
      'close hadError=true',
    ]);
    expect(view.bytes).toBeLessThan(sent);
  });

  it('closes a socket whose shutdown is in flight (a reset would be refused and it would never close); the peer reads every byte and the FIN', async () => {
    const { server, ours, oursClosed, peer } = await pair();
    servers.push(server);
    const view = watch(peer);
    ours.write('every byte');
    ours.end();
    expect({ waiting: ours.writableLength, finished: ours.writableFinished }).toEqual({
      waiting: 0,
      finished: false,
    });
    resetSocket(ours);
    await pollUntil("our socket's 'close'", oursClosed, Boolean);
    await pollUntil(
      'the peer to read the EOF',
      () => [...view.seen],
      (s) => s.includes('end'),
    );
    expect({ bytes: view.bytes, seen: view.seen }).toEqual({ bytes: 'every byte'.length, seen: ['end'] });
    peer.destroy();
  });
});
