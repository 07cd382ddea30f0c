/**
 * The separate processes of bench/datapath-isolation.ts, one role each:
 *
 *   ingress <plain|tls> [handshakes-per-source]  the mock management API with its binding ingress at the mock's default
 *                        budgets (1,024 connections, 512 per endpoint URL, 256 handshakes, 64
 *                        per source, a 5 s upstream connect): the isolation figures are about
 *                        those budgets, so none is raised here (datapath-roles.ts raises them)
 *   black-hole           a listening socket that never accepts (backlog 1, the event loop
 *                        blocked): once the driver filled its accept queue the kernel drops
 *                        every further SYN, so a connect to it hangs, like an upstream whose
 *                        host drops SYNs
 *   sampler <port> <source> <n> <gap-ms> <timeout-ms>
 *                        B's clients: after 5 warm-up echoes, `n` timed echoes `gap-ms` apart
 *                        (support/isolation-clients.ts sampleEchoes), in a process of their own so that A's crowd in the driver
 *                        does not delay B's timers and reads; prints `{"ready":true}`, then one
 *                        line with the samples (times since the epoch) and exits
 *
 * Each prints one JSON line with its addresses, then serves until killed.
 */
import { createServer, type AddressInfo } from 'node:net';
import { createLogger } from '../src/log/logger.js';
import { startMockApi } from '../src/mock/server.js';
import { sampleEchoes, timedEcho } from './support/isolation-clients.js';

const BENCH_API_KEY = process.env['BENCH_API_KEY'] ?? 'bench_api_key_0123456789';
const BENCH_AUTHTOKEN = process.env['BENCH_AUTHTOKEN'] ?? 'bench_authtoken_0123456789';

/** `handshakesPerSource`: the one budget a run may raise, to show what it costs (0: the default). */
async function ingress(tls: boolean, handshakesPerSource: number): Promise<void> {
  const handshakes =
    handshakesPerSource > 0
      ? { max_handshakes: Math.max(256, handshakesPerSource), max_handshakes_per_source: handshakesPerSource }
      : {};
  const api = await startMockApi({
    config: {
      accounts: [{ id: 'bench', api_keys: [BENCH_API_KEY], authtokens: [BENCH_AUTHTOKEN] }],
      rate_limit: { requests: 1_000_000, window_seconds: 60 },
      ingress: { tls, ...handshakes },
    },
    ingress: {},
    // Its refusals and evictions (warn), one line each, for the driver to count by code.
    logger: createLogger({ level: 'warn', name: 'ingress' }),
  });
  process.stdout.write(
    JSON.stringify({ api: api.url, ingress: api.ingressAddress, ca: api.ingressCaPem ?? '' }) + '\n',
  );
}

function blackHole(): void {
  const server = createServer();
  server.listen({ port: 0, host: '127.0.0.1', backlog: 1 }, () => {
    process.stdout.write(JSON.stringify({ port: (server.address() as AddressInfo).port }) + '\n', () => {
      // Never returns to the event loop, so nothing is ever accepted (an hour at most).
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 3_600_000);
      process.exit(0);
    });
  });
}

async function sampler(args: string[]): Promise<void> {
  const [port, n, gap, timeout] = [args[0], args[2], args[3], args[4]].map(Number) as [
    number,
    number,
    number,
    number,
  ];
  const source = args[1] ?? '127.0.0.1';
  // A fresh process: its first connections compile the net and timer paths; not B's latency.
  for (let i = 0; i < 5; i++) await timedEcho(port, source, timeout);
  process.stdout.write(JSON.stringify({ ready: true }) + '\n');
  const s = await sampleEchoes(port, source, n, gap, timeout);
  const epoch = performance.timeOrigin;
  const line = {
    ms: s.ms,
    timeline: s.timeline.map((t) => ({ at: epoch + t.at, ms: t.ms })),
    n: s.n,
    failures: [...s.failures],
  };
  process.stdout.write(JSON.stringify(line) + '\n', () => process.exit(0));
}

const role = process.argv[2];
if (role === 'ingress') await ingress(process.argv[3] === 'tls', Number(process.argv[4] ?? 0));
else if (role === 'black-hole') blackHole();
else if (role === 'sampler') await sampler(process.argv.slice(3));
else {
  process.stderr.write(
    `usage: isolation-roles.ts ingress <plain|tls> [handshakes-per-source] | black-hole | sampler <port> <source> <n> <gap-ms> <timeout-ms> (got ${role ?? 'nothing'})\n`,
  );
  process.exit(2);
}
