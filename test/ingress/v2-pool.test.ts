import { createServer, type Http2Server, type Http2Session, type ServerHttp2Stream } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { IngressV2Pool } from '../../src/api/ingress/v2-dialer.js';

/** What the ingress saw of one stream: its request headers and the session it came on. */
interface Seen {
  authority: string | undefined;
  url: string | undefined;
  session: Http2Session | undefined;
  stream: ServerHttp2Stream;
}

/**
 * A bare HTTP/2 (h2c) server standing in for the binding ingress's v2 side: it answers every
 * CONNECT 200 and records what it was asked, so the pool's requests and its choice of session
 * are seen from the other end of the wire.
 */
async function startRecorder(): Promise<{ server: Http2Server; address: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createServer();
  server.on('stream', (stream, headers) => {
    stream.on('error', () => undefined);
    seen.push({
      authority: headers[':authority'],
      url: headers['x-binding-url'] as string | undefined,
      session: stream.session,
      stream,
    });
    stream.respond({ ':status': 200 });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, address: `127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

/** The v2 pool's requests and session choice (#27: the per-stream work kept small, its meaning kept). */
describe('IngressV2Pool requests and session choice', () => {
  const cleanup: (() => void)[] = [];
  afterEach(() => {
    for (const f of cleanup.splice(0).reverse()) f();
  });

  async function setup(maxSessions: number) {
    const rec = await startRecorder();
    const pool = new IngressV2Pool({ address: rec.address, maxSessions });
    cleanup.push(
      () => rec.server.close(),
      () => pool.destroy(),
    );
    const open = (url: string) => pool.open({ authtoken: 'tok_0123456789abcdef', url, timeoutMs: 5_000 });
    return { rec, pool, open };
  }

  it('names each URL its own CONNECT authority, also when URLs alternate on one pool', async () => {
    const { rec, open } = await setup(1);
    const urls = ['tcp://a.ns:7000', 'http://b.ns', 'https://c.ns', 'tcp://a.ns:7000', 'http://b.ns:8080'];
    for (const url of urls) (await open(url)).close();
    expect(rec.seen.map((s) => [s.url, s.authority])).toEqual([
      ['tcp://a.ns:7000', 'a.ns:7000'],
      ['http://b.ns', 'b.ns:80'],
      ['https://c.ns', 'c.ns:443'],
      ['tcp://a.ns:7000', 'a.ns:7000'],
      ['http://b.ns:8080', 'b.ns:8080'],
    ]);
  });

  it('puts a stream on an idle session, opens another while every session is busy, and then takes the least busy', async () => {
    const { rec, pool, open } = await setup(2);
    const a = await open('tcp://a.ns:1');
    const b = await open('tcp://a.ns:2'); // the only session is busy and the pool allows two
    expect(pool.sessionCount).toBe(2);
    const [sa, sb] = [rec.seen[0]!.session, rec.seen[1]!.session];
    expect(sb).not.toBe(sa);
    // a's session is idle again once a is closed on both ends.
    a.close();
    await new Promise<void>((r) => (a.closed ? r() : a.once('close', () => r())));
    const c = await open('tcp://a.ns:3');
    expect(rec.seen[2]!.session === sa ? 'a' : rec.seen[2]!.session === sb ? 'b' : 'new').toBe('a');
    // Both sessions carry one stream now (c, b) and the pool is full: the least busy, the first on a tie.
    const d = await open('tcp://a.ns:4');
    expect(pool.sessionCount).toBe(2);
    expect(rec.seen[3]!.session === sa ? 'a' : rec.seen[3]!.session === sb ? 'b' : 'new').toBe('a');
    // Now a's session carries two (c, d) and b's one: the next goes on b's.
    const e = await open('tcp://a.ns:5');
    expect(rec.seen[4]!.session === sa ? 'a' : rec.seen[4]!.session === sb ? 'b' : 'new').toBe('b');
    for (const s of [b, c, d, e]) s.close();
  });
});
