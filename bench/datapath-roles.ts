/**
 * The separate processes of the data-path benchmark (bench/datapath.ts), one role each:
 *
 *   upstream  a TCP echo, a TCP sink (reads to EOF, answers with the byte count, ends) and a
 *             TCP source (reads a byte count and a newline, sends that many bytes, ends)
 *   ingress   the mock management API with its binding ingress (plain TCP, loopback)
 *   ingress-tls  the same with a TLS ingress (development certificate; its CA is printed)
 *   relay <ingress> <url> <plain|tls-fresh|tls-cached> [ca-file]
 *             a minimal Node.js relay doing the forwarder's hop: accept, dial the ingress with
 *             the project's dialer, pipe; the ceiling for a Node process. `tls-fresh` builds a
 *             SecureContext per connection and never resumes (the dialer before #15);
 *             `tls-cached` reuses one context and resumes sessions (after).
 *
 * Each prints one JSON line with its addresses, then serves until killed. The forwarder runs as
 * the real CLI (`endpoint-binder forwarder`).
 */
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { readFileSync } from 'node:fs';
import { connectThroughIngress, type IngressTlsOptions } from '../src/api/ingress/dialer.js';
import { resetSocket } from '../src/api/ingress/reset.js';
import { reusableTls } from '../src/api/ingress/tls-client.js';
import { startMockApi } from '../src/mock/server.js';

// The driver passes the credentials of the one account (benchmark-only values).
const BENCH_API_KEY = process.env['BENCH_API_KEY'] ?? 'bench_api_key_0123456789';
const BENCH_AUTHTOKEN = process.env['BENCH_AUTHTOKEN'] ?? 'bench_authtoken_0123456789';

// With BENCH_CPU_PROF_DIR (support/spawn-json.ts) a role exits on SIGTERM, so its profile is written.
if (process.env['BENCH_CPU_PROF_DIR']) process.on('SIGTERM', () => process.exit(0));

async function listen(server: Server): Promise<number> {
  await new Promise<void>((r) => server.listen({ port: 0, host: '127.0.0.1', backlog: 4096 }, r));
  return (server.address() as AddressInfo).port;
}

async function upstream(): Promise<void> {
  const echo = createServer({ allowHalfOpen: true }, (s) => {
    s.on('error', () => undefined);
    s.setNoDelay(true);
    s.pipe(s);
  });
  const sink = createServer({ allowHalfOpen: true }, (s) => {
    s.on('error', () => undefined);
    let n = 0;
    s.on('data', (c: Buffer) => (n += c.length));
    s.on('end', () => s.end(`${n}\n`));
  });
  // A download: reads one line, a byte count, then sends that many bytes and ends.
  const source = createServer({ allowHalfOpen: true }, (s) => {
    s.on('error', () => undefined);
    let line = '';
    const onData = (c: Buffer) => {
      line += c.toString('latin1');
      if (!line.includes('\n')) return;
      s.off('data', onData);
      s.resume();
      void sendBytes(s, Number(line.split('\n')[0]));
    };
    s.on('data', onData);
  });
  process.stdout.write(
    JSON.stringify({ echo: await listen(echo), sink: await listen(sink), source: await listen(source) }) +
      '\n',
  );
}

/** `total` bytes in 1 MiB writes, respecting backpressure, then a clean end. */
async function sendBytes(s: Socket, total: number): Promise<void> {
  const chunk = Buffer.alloc(1024 * 1024, 0x5a);
  for (let sent = 0; sent < total && !s.destroyed; sent += chunk.length) {
    if (!s.write(chunk.subarray(0, Math.min(chunk.length, total - sent))))
      await new Promise((r) => s.once('drain', r));
  }
  s.end();
}

/** The mock ingress's v2 stream window, when the bench asks for one (BENCH_H2_WINDOW, bytes). */
function h2Window(): { h2_window_bytes?: number } {
  const w = Number(process.env['BENCH_H2_WINDOW'] ?? '');
  return Number.isInteger(w) && w > 0 ? { h2_window_bytes: w } : {};
}

async function ingress(): Promise<void> {
  const api = await startMockApi({
    config: {
      accounts: [{ id: 'bench', api_keys: [BENCH_API_KEY], authtokens: [BENCH_AUTHTOKEN] }],
      rate_limit: { requests: 1_000_000, window_seconds: 60 },
      ingress: { max_connections: 20_000, ...h2Window() },
    },
    ingress: {},
  });
  process.stdout.write(JSON.stringify({ api: api.url, ingress: api.ingressAddress }) + '\n');
}

async function ingressTls(): Promise<void> {
  const api = await startMockApi({
    config: {
      accounts: [{ id: 'bench', api_keys: [BENCH_API_KEY], authtokens: [BENCH_AUTHTOKEN] }],
      rate_limit: { requests: 1_000_000, window_seconds: 60 },
      ingress: {
        ...h2Window(),
        max_connections: 20_000,
        tls: true,
        max_handshakes: 4096,
        max_handshakes_per_source: 4096,
      },
    },
    ingress: {},
  });
  process.stdout.write(
    JSON.stringify({ api: api.url, ingress: api.ingressAddress, ca: api.ingressCaPem }) + '\n',
  );
}

async function relay(address: string, url: string, mode: string, caFile: string | undefined): Promise<void> {
  const ca = caFile ? readFileSync(caFile, 'utf8') : undefined;
  const cached = mode === 'tls-cached' ? reusableTls(ca ? { ca } : {}) : undefined;
  const tlsFor = (): IngressTlsOptions | undefined =>
    mode === 'plain' ? undefined : (cached ?? (ca ? { ca } : {}));
  const server = createServer({ allowHalfOpen: true, pauseOnConnect: true }, (client) => {
    client.on('error', () => undefined);
    const tls = tlsFor();
    connectThroughIngress({
      address,
      authtoken: BENCH_AUTHTOKEN,
      url,
      timeoutMs: 10_000,
      ...(tls ? { tls } : {}),
    }).then(
      (up) => {
        up.on('error', () => resetSocket(client));
        client.on('error', () => resetSocket(up));
        client.pipe(up);
        up.pipe(client);
        client.resume();
      },
      () => resetSocket(client),
    );
  });
  process.stdout.write(JSON.stringify({ relay: await listen(server) }) + '\n');
}

const role = process.argv[2];
if (role === 'upstream') await upstream();
else if (role === 'ingress') await ingress();
else if (role === 'ingress-tls') await ingressTls();
else if (role === 'relay')
  await relay(process.argv[3]!, process.argv[4]!, process.argv[5] ?? 'plain', process.argv[6]);
else {
  process.stderr.write(
    `usage: datapath-roles.ts upstream|ingress|ingress-tls|relay (got ${role ?? 'nothing'})\n`,
  );
  process.exit(2);
}
