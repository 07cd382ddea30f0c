/**
 * The separate processes of the data-path benchmark (bench/datapath.ts), one role each:
 *
 *   upstream  a TCP echo and a TCP sink (reads to EOF, answers with the byte count, ends)
 *   ingress   the mock management API with its binding ingress (plain TCP, loopback)
 *
 * Each prints one JSON line with its addresses, then serves until killed. The forwarder runs as
 * the real CLI (`endpoint-binder forwarder`).
 */
import { createServer, type AddressInfo, type Server } from 'node:net';
import { startMockApi } from '../src/mock/server.js';

// The driver passes the credentials of the one account (benchmark-only values).
const BENCH_API_KEY = process.env['BENCH_API_KEY'] ?? 'bench_api_key_0123456789';
const BENCH_AUTHTOKEN = process.env['BENCH_AUTHTOKEN'] ?? 'bench_authtoken_0123456789';

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
  process.stdout.write(JSON.stringify({ echo: await listen(echo), sink: await listen(sink) }) + '\n');
}

async function ingress(): Promise<void> {
  const api = await startMockApi({
    config: {
      accounts: [{ id: 'bench', api_keys: [BENCH_API_KEY], authtokens: [BENCH_AUTHTOKEN] }],
      rate_limit: { requests: 1_000_000, window_seconds: 60 },
      ingress: { max_connections: 20_000 },
    },
    ingress: {},
  });
  process.stdout.write(JSON.stringify({ api: api.url, ingress: api.ingressAddress }) + '\n');
}

const role = process.argv[2];
if (role === 'upstream') await upstream();
else if (role === 'ingress') await ingress();
else {
  process.stderr.write(`usage: datapath-roles.ts upstream|ingress (got ${role ?? 'nothing'})\n`);
  process.exit(2);
}
