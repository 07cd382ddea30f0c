/**
 * Binding ingress protocol v1 against v2, in two parts (`--part`).
 *
 * `forwarder` (default): the real forwarder process (`endpoint-binder forwarder`, `ingress.protocol`
 * v1 or v2), plain and TLS, against the mock ingress directly (0 ms) and through a delay proxy of
 * `--rtt` ms between forwarder and ingress; beside direct (client → upstream) and the minimal relay
 * (bench/datapath-roles.ts `relay`: accept, v1 dial, pipe; plain and TLS with a cached context) at
 * 0 ms. Per path: new connections/s and CPU per connection (the forwarder's or relay's process and
 * the ingress process, from /proc; the client and the delay proxy share this process and are not
 * counted), the time from the client's connect to the echo of its first byte (sent at once),
 * p50/p99 of sequential connections, a `--mib` MiB stream to a sink (upload) and from a source
 * (download; direct and forwarders), and the forwarder's RSS growth
 * per idle forwarded connection (`--idle` connections, each after one echo; 0 ms paths only).
 * Every path is measured once per round, `--pairs` rounds, in a fixed order.
 *
 *   npx tsx bench/datapath-v2.ts [--conns 3000 --concurrency 16 --pairs 3 --rtt 50 --ttfb 100 --mib 64 --idle 1000]
 *   (the run in BENCHMARKS.md: --conns 600 --pairs 3 --ttfb 50)
 *
 * `dialer`: the client side of the protocol alone, no forwarder: one forwarded connection = open
 * through the ingress, a 1-byte echo, close.
 *
 *   v1  connectThroughIngress: one TLS connection per forwarded connection (one cached
 *       SecureContext, session resumption), as the forwarder dials today
 *   v2  IngressV2Pool: one CONNECT stream per forwarded connection on 2 long-lived TLS sessions
 *
 * The ingress (mock, TLS) and the echo upstream are separate processes; CPU is counted for the
 * client (this process) and the ingress process, per connection. Then the time to the first
 * byte (from the open to the echo of the first byte sent at once) through a delay proxy of
 * `--rtt` ms, sequential connections.
 * Modes alternate `--pairs` times in one run.
 *
 *   npx tsx bench/datapath-v2.ts --part dialer [--conns 3000 --concurrency 16 --pairs 3 --rtt 50 --ttfb 100]
 */
import { z } from 'zod';
import { connectThroughIngress } from '../src/api/ingress/dialer.js';
import { reusableTls } from '../src/api/ingress/tls-client.js';
import { IngressV2Pool } from '../src/api/ingress/v2-dialer.js';
import { parseHostPort } from '../src/net/host-port.js';
import { startDelayProxy } from './datapath-delay-proxy.js';
import { parseBenchArgs } from './support/args.js';
import { createTcpEndpoint } from './support/endpoints.js';
import { bounded, cpuSeconds, loadAverage, median } from './support/load.js';
import { spawnJson, stopChildren } from './support/spawn-json.js';
import { forwarderPart } from './datapath-v2-forwarder.js';

const Args = z.object({
  part: z.enum(['forwarder', 'dialer']).default('forwarder'),
  mib: z.coerce.number().int().min(1).max(4096).default(64),
  idle: z.coerce.number().int().min(0).max(8000).default(1000),
  conns: z.coerce.number().int().min(100).max(100_000).default(3000),
  concurrency: z.coerce.number().int().min(1).max(256).default(16),
  pairs: z.coerce.number().int().min(1).max(20).default(3),
  rtt: z.coerce.number().int().min(0).max(1000).default(50),
  ttfb: z.coerce.number().int().min(10).max(10_000).default(100),
  /** forwarder part: only the paths whose label matches (a regular expression), e.g. `v2 tls`. */
  only: z.string().min(1).optional(),
  /** forwarder part: the mock ingress's per-stream window (`h2_window_bytes`, default its own 1 MiB). */
  'ingress-window': z.coerce.number().int().min(65_535).max(2_147_483_647).optional(),
  /** forwarder part: the forwarder's v2 stream window (`ingress.streamWindowBytes`, default its own). */
  'forwarder-window': z.coerce.number().int().min(65_535).max(2_147_483_647).optional(),
  /** forwarder part: the window its v2 streams share (`ingress.sharedWindowBytes`, default its own). */
  'forwarder-shared-window': z.coerce.number().int().min(0).max(1_073_741_824).optional(),
});
const args = parseBenchArgs('bench/datapath-v2.ts', Args);

const API_KEY = 'bench_api_key_0123456789';
const AUTHTOKEN = 'bench_authtoken_0123456789';
const ECHO_URL = 'tcp://echo.bench:7000';

type Mode = 'v1' | 'v2';
type OneConnection = (onFirstByte?: () => void) => Promise<void>;

function log(line: string): void {
  process.stdout.write(line + '\n');
}

/** One byte out, its echo back, then a clean close; rejects on anything else. */
function echoOnce(s: NodeJS.ReadWriteStream & { destroy(): void }, onFirstByte?: () => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      s.destroy();
      reject(new Error('no echo within 10 s'));
    }, 10_000);
    s.once('data', () => {
      onFirstByte?.();
      clearTimeout(timer);
      s.on('data', () => undefined);
      s.once('close', () => resolve());
      s.end();
    });
    s.once('error', (e: Error) => {
      clearTimeout(timer);
      reject(e);
    });
    s.write('x');
    s.resume(); // the v1 dialer hands the socket over paused
  });
}

function connector(mode: Mode, address: string, ca: string): { one: OneConnection; close(): void } {
  if (mode === 'v1') {
    const tls = reusableTls({ ca });
    return {
      one: async (onFirstByte) =>
        echoOnce(
          await connectThroughIngress({
            address,
            authtoken: AUTHTOKEN,
            url: ECHO_URL,
            tls,
            timeoutMs: 10_000,
          }),
          onFirstByte,
        ),
      close: () => undefined,
    };
  }
  const pool = new IngressV2Pool({ address, tls: reusableTls({ ca }), maxSessions: 2 });
  return {
    one: async (onFirstByte) =>
      echoOnce(await pool.open({ authtoken: AUTHTOKEN, url: ECHO_URL, timeoutMs: 10_000 }), onFirstByte),
    close: () => pool.close(),
  };
}

async function rate(
  one: OneConnection,
  count: number,
  concurrency: number,
): Promise<{ perSecond: number; failed: number }> {
  let next = 0;
  let failed = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        next++;
        await one().catch(() => failed++);
      }
    }),
  );
  return { perSecond: count / ((performance.now() - t0) / 1000), failed };
}

async function dialerPart(): Promise<void> {
  log(
    `datapath-v2 bench: node ${process.version}, ${args.conns} connections x${args.concurrency}, ${args.pairs} pairs, ttfb ${args.ttfb} at ${args.rtt} ms RTT`,
  );
  log(`load average at start: ${await loadAverage()}`);
  const up = await spawnJson(['bench/datapath-roles.ts', 'upstream'], {}, (o) =>
    typeof o['echo'] === 'number' ? { echo: o['echo'] } : undefined,
  );
  const ing = await spawnJson(
    ['bench/datapath-roles.ts', 'ingress-tls'],
    { BENCH_API_KEY: API_KEY, BENCH_AUTHTOKEN: AUTHTOKEN },
    (o) =>
      typeof o['ingress'] === 'string'
        ? { api: o['api'] as string, ingress: o['ingress'], ca: String(o['ca']) }
        : undefined,
  );
  await createTcpEndpoint(ing.value.api, API_KEY, ECHO_URL, up.value.echo);
  const ingressPid = ing.child.pid!;

  const results: Record<Mode, { perSecond: number; clientUs: number; ingressUs: number; failed: number }[]> =
    {
      v1: [],
      v2: [],
    };
  for (let pair = 0; pair < args.pairs; pair++) {
    for (const mode of ['v1', 'v2'] as const) {
      const c = connector(mode, ing.value.ingress, ing.value.ca);
      await rate(c.one, 200, args.concurrency); // warm-up: sessions, JIT
      const cpu0 = process.cpuUsage();
      const ing0 = await cpuSeconds(ingressPid);
      const r = await bounded(`${mode} rate`, rate(c.one, args.conns, args.concurrency));
      const cpu = process.cpuUsage(cpu0);
      const ingCpu = (await cpuSeconds(ingressPid)) - ing0;
      c.close();
      const row = {
        perSecond: r.perSecond,
        clientUs: ((cpu.user + cpu.system) / args.conns) | 0,
        ingressUs: ((ingCpu * 1e6) / args.conns) | 0,
        failed: r.failed,
      };
      results[mode].push(row);
      log(
        `pair ${pair + 1} ${mode}: ${row.perSecond.toFixed(0)} connections/s, CPU per connection: client ${row.clientUs} µs, ingress ${row.ingressUs} µs, failed ${row.failed}`,
      );
    }
  }
  for (const mode of ['v1', 'v2'] as const) {
    const rs = results[mode];
    log(
      `median ${mode}: ${median(rs.map((r) => r.perSecond)).toFixed(0)} connections/s, client ${median(rs.map((r) => r.clientUs))} µs, ingress ${median(rs.map((r) => r.ingressUs))} µs per connection`,
    );
  }
  const m = (mode: Mode, k: 'clientUs' | 'ingressUs' | 'perSecond') => median(results[mode].map((r) => r[k]));
  log(
    `ratio v2/v1: CPU per connection client ${(m('v2', 'clientUs') / m('v1', 'clientUs')).toFixed(2)}, ingress ${(m('v2', 'ingressUs') / m('v1', 'ingressUs')).toFixed(2)}, client+ingress ${((m('v2', 'clientUs') + m('v2', 'ingressUs')) / (m('v1', 'clientUs') + m('v1', 'ingressUs'))).toFixed(2)}; rate ${(m('v2', 'perSecond') / m('v1', 'perSecond')).toFixed(2)}`,
  );

  // Time to the first byte across a round trip: sequential, so each is one client alone.
  const proxy = await startDelayProxy(parseHostPort(ing.value.ingress), args.rtt);
  for (const mode of ['v1', 'v2'] as const) {
    const c = connector(mode, proxy.address, ing.value.ca);
    await c.one(); // v2: the session is up before timing; v1: a session to resume
    const ms: number[] = [];
    for (let i = 0; i < args.ttfb; i++) {
      const t0 = performance.now();
      let first = NaN;
      await c.one(() => (first = performance.now() - t0));
      ms.push(first);
    }
    c.close();
    ms.sort((a, b) => a - b);
    const p = (q: number) => ms[Math.min(ms.length - 1, Math.floor(q * ms.length))]!;
    log(
      `ttfb ${mode} at ${args.rtt} ms RTT: p50 ${p(0.5).toFixed(1)} ms (${(p(0.5) / Math.max(1, args.rtt)).toFixed(2)} RTT), p99 ${p(0.99).toFixed(1)} ms (from open to the echo of its first byte)`,
    );
  }
  await proxy.close();
  log(`load average at end: ${await loadAverage()}`);
}

try {
  await (args.part === 'dialer'
    ? dialerPart()
    : forwarderPart({
        ...args,
        ingressWindow: args['ingress-window'],
        forwarderWindow: args['forwarder-window'],
        forwarderSharedWindow: args['forwarder-shared-window'],
        apiKey: API_KEY,
        authtoken: AUTHTOKEN,
      }));
} finally {
  await stopChildren();
}
