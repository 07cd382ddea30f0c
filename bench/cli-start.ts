/**
 * How long `endpoint-binder` takes to answer (issue #29 item 6): wall time of one whole process,
 * from spawn to exit, for `--version` and for `status` against a local HTTP server answering a
 * status document (3 endpoints), in alternating rounds:
 *
 * - `bin`: `node bin/endpoint-binder.js …`, what `npx endpoint-binder` runs after `npm ci` (the
 *   `prepare` script has built dist/, which it runs when it is newer than every source);
 * - `tsx` (the baseline, what bin/ ran before): `node --import tsx src/cli/main.ts …`, the sources
 *   compiled on every call;
 * - `npx`: `npx endpoint-binder …`, the same as `bin` plus npm's own start.
 *
 *   npm run bench:cli-start [-- --rounds 10]
 *
 * Needs a current dist/ (`npm run build`); refuses to run otherwise, since `bin` would then fall
 * back to tsx and measure the baseline twice.
 */
import { spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { z } from 'zod';
import { parseBenchArgs } from './support/args.js';
import { loadAverage, median } from './support/load.js';

const args = parseBenchArgs(
  'bench:cli-start',
  z.object({ rounds: z.coerce.number().int().min(1).max(100).default(10) }),
);

const STATUS = {
  operator: { id: 'k8sop_bench', ingress: 'ingress.example:443' },
  install: { release: 'endpoint-binder', operatorNamespace: 'endpoint-binder' },
  selector: 'true',
  bindingsEnabled: true,
  leader: true,
  leadership: { holder: 'bench-0', since: new Date().toISOString(), cannotLead: [] },
  ready: true,
  notificationsLive: true,
  lastFullSync: new Date().toISOString(),
  counts: { projected: 3 },
  endpoints: [1, 2, 3].map((i) => ({
    id: `ep_bench${i}`,
    url: `http://api${i}.prod`,
    state: 'projected',
    reason: '',
    internalService: { namespace: 'endpoint-binder', name: `ep-bench${i}` },
    aliasService: { namespace: 'prod', name: `api${i}` },
    targetPort: 10000 + i,
  })),
};

function newestSourceMs(): number {
  let newest = 0;
  for (const name of readdirSync('src', { recursive: true }))
    if (typeof name === 'string' && name.endsWith('.ts'))
      newest = Math.max(newest, statSync(`src/${name}`).mtimeMs);
  return newest;
}

/** Wall milliseconds of one process from spawn to exit; fails on an unexpected exit code. */
function timed(cmd: string, argv: string[]): Promise<number> {
  const t0 = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, argv, { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    // A call that hangs fails the run after 60 s instead of stalling it.
    const timer = setTimeout(() => {
      err += ' (killed after 60 s)';
      child.kill('SIGKILL');
    }, 60_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      if (code === 0) resolve(ms);
      else reject(new Error(`${cmd} ${argv.join(' ')} exited ${code}: ${err.trim()}`));
    });
  });
}

async function main(): Promise<void> {
  let built: number;
  try {
    built = statSync('dist/cli/main.js').mtimeMs;
  } catch {
    built = 0;
  }
  if (built < newestSourceMs()) {
    process.stderr.write('bench:cli-start: dist/ is missing or older than src/; run `npm run build` first\n');
    process.exit(2);
  }
  const server = createServer((_req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify(STATUS));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;

  const ways = {
    bin: (cli: string[]) => [process.execPath, ['bin/endpoint-binder.js', ...cli]] as const,
    tsx: (cli: string[]) => [process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...cli]] as const,
    npx: (cli: string[]) => ['npx', ['--no-install', 'endpoint-binder', ...cli]] as const,
  };
  const calls = { version: ['--version'], status: ['status', '--url', url] };
  const samples = new Map<string, number[]>();
  const loadBefore = await loadAverage();
  for (let round = 0; round < args.rounds; round++) {
    for (const [call, cli] of Object.entries(calls)) {
      for (const [way, make] of Object.entries(ways)) {
        const [cmd, argv] = make(cli);
        const ms = await timed(cmd, [...argv]);
        const key = `${call} via ${way}`;
        samples.set(key, [...(samples.get(key) ?? []), ms]);
      }
    }
  }
  const loadAfter = await loadAverage();
  server.close();
  const table = [...samples].map(([key, xs]) => ({
    key,
    medianMs: Math.round(median(xs)),
    minMs: Math.round(Math.min(...xs)),
    maxMs: Math.round(Math.max(...xs)),
  }));
  for (const r of table)
    process.stdout.write(`${r.key.padEnd(20)} median ${r.medianMs} ms (min ${r.minMs}, max ${r.maxMs})\n`);
  for (const call of Object.keys(calls)) {
    const base = median(samples.get(`${call} via tsx`) ?? []);
    const bin = median(samples.get(`${call} via bin`) ?? []);
    process.stdout.write(`${call}: tsx / bin = ${(base / bin).toFixed(2)}x\n`);
  }
  process.stdout.write(
    `rounds ${args.rounds}, node ${process.versions.node}, load average before ${loadBefore}, after ${loadAfter}\n`,
  );
}

await main();
