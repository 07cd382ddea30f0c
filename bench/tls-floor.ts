/**
 * The floor of a Node.js TLS client connection (#15 item 6): a bare `tls.connect` with one cached
 * SecureContext, against a bare Node.js TLS server (the mock ingress's development certificate, in
 * a process of its own), one byte each way, then closed. Client CPU per connection, fresh
 * handshakes against resumed ones, in alternating rounds. What the forwarder's TLS dial costs on
 * top of its plain hop cannot go below this while every client connection is its own TLS
 * connection to the ingress (docs/ingress.md, the binding ingress protocol).
 *
 *   npm run bench:tls-floor [-- --conns 2000 --concurrency 32 --rounds 3]
 */
import { loadavg } from 'node:os';
import { connect, createSecureContext, createServer, type SecureContext } from 'node:tls';
import { z } from 'zod';
import { devCertificate } from '../src/net/dev-cert.js';
import { parseBenchArgs } from './support/args.js';
import { children, spawnJson } from './support/spawn-json.js';

async function server(): Promise<void> {
  const dev = await devCertificate();
  const s = createServer({ key: dev.key, cert: dev.cert, allowHalfOpen: true }, (c) => {
    c.on('error', () => undefined);
    c.once('data', () => c.end('k'));
  });
  await new Promise<void>((r) => s.listen({ port: 0, host: '127.0.0.1', backlog: 4096 }, r));
  const port = (s.address() as { port: number }).port;
  process.stdout.write(JSON.stringify({ port, ca: dev.cert }) + '\n');
}

type Mode = 'fresh' | 'resumed';

function oneConnection(
  port: number,
  ctx: SecureContext,
  mode: Mode,
  state: { session?: Buffer; reused: number },
): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      s.destroy();
      reject(new Error('a TLS connection took over 10 s'));
    }, 10_000);
    const s = connect({
      host: '127.0.0.1',
      port,
      servername: 'localhost',
      secureContext: ctx,
      ...(mode === 'resumed' && state.session ? { session: state.session } : {}),
    });
    if (mode === 'resumed') s.on('session', (b: Buffer) => (state.session = b));
    s.on('secureConnect', () => {
      if (s.isSessionReused()) state.reused++;
      s.write('x');
    });
    s.on('data', () => undefined);
    s.on('end', () => s.end());
    s.on('close', () => {
      clearTimeout(timer);
      resolve();
    });
    s.on('error', (err: Error) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}

async function round(
  port: number,
  ctx: SecureContext,
  mode: Mode,
  conns: number,
  concurrency: number,
): Promise<{ rate: number; cpuUs: number; reused: number }> {
  const state: { session?: Buffer; reused: number } = { reused: 0 };
  // One connection first, so a resumed round starts with a session.
  await oneConnection(port, ctx, mode, state);
  state.reused = 0;
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next++ < conns) await oneConnection(port, ctx, mode, state);
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(c0);
  return { rate: conns / seconds, cpuUs: (cpu.user + cpu.system) / conns, reused: state.reused };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const load = (): string =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');

async function main(): Promise<void> {
  const args = parseBenchArgs(
    'bench/tls-floor.ts',
    z.object({
      conns: z.coerce.number().int().min(100).max(100_000).default(2000),
      concurrency: z.coerce.number().int().min(1).max(512).default(32),
      rounds: z.coerce.number().int().min(1).max(20).default(3),
    }),
  );
  const srv = await spawnJson(['bench/tls-floor.ts', 'server'], {}, (o) =>
    typeof o['port'] === 'number' && typeof o['ca'] === 'string'
      ? { port: o['port'], ca: o['ca'] }
      : undefined,
  );
  const ctx = createSecureContext({ ca: srv.value.ca });
  process.stdout.write(
    `TLS client floor: node ${process.version}, OpenSSL ${process.versions.openssl}, ${args.conns} connections x${args.concurrency} per round, ${args.rounds} rounds; load average ${load()}\n`,
  );
  const out: Record<Mode, { rate: number[]; cpu: number[] }> = {
    fresh: { rate: [], cpu: [] },
    resumed: { rate: [], cpu: [] },
  };
  for (let i = 0; i < args.rounds; i++) {
    for (const mode of (i % 2 === 0 ? ['resumed', 'fresh'] : ['fresh', 'resumed']) as Mode[]) {
      const r = await round(srv.value.port, ctx, mode, args.conns, args.concurrency);
      out[mode].rate.push(r.rate);
      out[mode].cpu.push(r.cpuUs);
      process.stdout.write(
        `  round ${i + 1} ${mode.padEnd(7)} ${r.rate.toFixed(0)}/s  client CPU ${r.cpuUs.toFixed(0)} us per connection  resumed ${r.reused}/${args.conns}  (load average ${load()})\n`,
      );
    }
  }
  for (const mode of ['resumed', 'fresh'] as Mode[])
    process.stdout.write(
      `${mode}: median ${median(out[mode].rate).toFixed(0)}/s, client CPU ${median(out[mode].cpu).toFixed(0)} us per connection\n`,
    );
}

if (process.argv[2] === 'server') await server();
else
  await main()
    .catch((err: unknown) => {
      process.stderr.write(
        `bench/tls-floor.ts failed: ${err instanceof Error ? err.message : String(err)}\n`,
      );
      process.exitCode = 1;
    })
    .finally(() => {
      for (const c of children) c.kill('SIGKILL');
    });
