/**
 * The floors of bench/idle-memory.ts, each its own process (run with the memory probe preloaded):
 *
 *   sockets   a TCP echo server (`s.pipe(s)`): one accepted net.Socket per held connection and
 *             nothing else; the floor of the client side of any relay
 *   h2-relay <ingress> <url> <plain|tls> [ca-file] [window]
 *             a minimal v2 relay on bare node:http2 (not this project's dialer): accept, one
 *             CONNECT stream per client on one long-lived session to the ingress, pipe both
 *             ways; the floor of a forwarded connection over v2 (socket + stream)
 *   h2-bare …  the same with a 'data' listener each way instead of pipe() (no backpressure): the
 *             floor without pipe()'s own state
 *
 * Each prints one JSON line with its port, then serves until killed.
 */
import { readFileSync } from 'node:fs';
import { connect as h2connect, type ClientHttp2Session } from 'node:http2';
import { createServer, type AddressInfo, type Server } from 'node:net';

const AUTHTOKEN = process.env['BENCH_AUTHTOKEN'] ?? 'bench_authtoken_0123456789';

async function listen(server: Server): Promise<void> {
  await new Promise<void>((r) => server.listen({ port: 0, host: '127.0.0.1', backlog: 4096 }, r));
  process.stdout.write(JSON.stringify({ port: (server.address() as AddressInfo).port }) + '\n');
}

async function sockets(): Promise<void> {
  await listen(
    createServer({ allowHalfOpen: true }, (s) => {
      s.on('error', () => undefined);
      s.pipe(s);
    }),
  );
}

function session(address: string, tls: boolean, ca: string | undefined, window: number | undefined) {
  const s: ClientHttp2Session = h2connect(`${tls ? 'https' : 'http'}://${address}`, {
    ...(ca ? { ca } : {}),
    ...(window ? { settings: { initialWindowSize: window } } : {}),
  });
  s.on('error', (e) => {
    process.stderr.write(`h2-relay: session error ${String(e)}\n`);
    process.exit(1);
  });
  return s;
}

async function h2Relay(
  address: string,
  url: string,
  tls: boolean,
  ca: string | undefined,
  window: number | undefined,
  bare: boolean,
) {
  // Sessions as the server's MAX_CONCURRENT_STREAMS requires (the mock ingress: 256 streams each).
  const pool: { h2: ClientHttp2Session; active: number }[] = [];
  const pick = () => {
    const room = pool.find((p) => p.active < (p.h2.remoteSettings.maxConcurrentStreams ?? 100));
    if (room) return room;
    const p = { h2: session(address, tls, ca, window), active: 0 };
    pool.push(p);
    return p;
  };
  const authority = /^[a-z]+:\/\/([^/]+)/.exec(url)?.[1] ?? url;
  await listen(
    createServer({ allowHalfOpen: true }, (client) => {
      client.on('error', () => undefined);
      const p = pick();
      p.active++;
      const stream = p.h2.request(
        {
          ':method': 'CONNECT',
          ':authority': authority,
          authorization: `Bearer ${AUTHTOKEN}`,
          'x-binding-url': url,
        },
        { endStream: false },
      );
      stream.once('close', () => p.active--);
      stream.on('error', () => client.destroy());
      client.on('close', () => stream.destroy());
      if (bare) {
        // No pipe(), no backpressure: the least a relay can hold per connection.
        client.on('data', (c: Buffer) => stream.write(c));
        stream.on('data', (c: Buffer) => client.write(c));
      } else {
        client.pipe(stream);
        stream.pipe(client);
      }
    }),
  );
}

const [role, address, url, mode, caFile, window] = process.argv.slice(2);
if (role === 'sockets') await sockets();
else if ((role === 'h2-relay' || role === 'h2-bare') && address && url)
  await h2Relay(
    address,
    url,
    mode === 'tls',
    caFile && caFile !== '-' ? readFileSync(caFile, 'utf8') : undefined,
    window ? Number(window) : undefined,
    role === 'h2-bare',
  );
else {
  process.stderr.write(
    `usage: idle-memory-roles.ts sockets | h2-relay|h2-bare <ingress> <url> <plain|tls> [ca-file] [window] (got ${role ?? 'nothing'})\n`,
  );
  process.exit(2);
}
