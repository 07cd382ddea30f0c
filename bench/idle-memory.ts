/**
 * Memory per idle forwarded connection, broken down (issue #27: ≤ 8 KiB per idle v2 connection).
 *
 * Each subject is a separate process run with `--expose-gc` and the bench-only memory probe
 * (bench/support/memory-probe.ts, preloaded with `--import`; production never loads it). Per
 * subject: a warm-up of 200 connections, then full GC + process.memoryUsage() at 0 held, at N/2
 * and N = `--idle` held connections (each held after the echo of its one byte), and after they
 * closed. Printed: the growth per held connection of each memoryUsage() field and of rss −
 * heapTotal (outside V8's heap, roughly), 0 → N and N/2 → N, and the rss growth 0 → N read just
 * before the forced GC at N. With `--snapshot yes|keep`, heap snapshots at N/2 and N and the
 * groups (constructor, closure name, native object) that grew, per connection.
 *
 * Subjects: the floors (bench/idle-memory-roles.ts: `sockets`, a TCP echo holding one net.Socket
 * per connection; `h2-relay`, a minimal relay on bare node:http2, socket + CONNECT stream, piped
 * both ways; `h2-bare`, the same with a 'data' listener each way instead of pipe()) and the real
 * forwarder CLI over v2 and v1, plain and TLS, against the mock ingress, as the image runs it
 * (`dist/cli/main.js`, so `npm run build` first; `--build src` runs the sources through tsx);
 * with `--before <dist dir>` also another build (e.g. `cp -r dist dist-before` on main), in the
 * same run.
 *
 *   npx tsx bench/idle-memory.ts [--idle 2000 --snapshot no --only 'v2' --before dist-before]
 */
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import { parseBenchArgs } from './support/args.js';
import { createTcpEndpoint } from './support/endpoints.js';
import { forwarderWorld } from './support/forwarder-world.js';
import { startForwarderProcess } from './support/forwarder-process.js';
import { perConnectionGrowth, summarizeHeapSnapshot } from './support/heap-snapshot.js';
import { bounded, connectionRate, freePort, holdIdle, loadAverage, rssMiB } from './support/load.js';
import { memoryProbePaths } from './support/memory-probe-paths.js';
import { children, spawnJson } from './support/spawn-json.js';

const Args = z.object({
  idle: z.coerce.number().int().min(100).max(8000).default(2000),
  /** `keep`: leave the snapshot files for a closer look (their paths are printed). */
  snapshot: z.enum(['yes', 'no', 'keep']).default('no'),
  /** Only the subjects whose label matches (a regular expression). */
  only: z.string().min(1).optional(),
  /**
   * The forwarder as the image runs it (`dist`: the compiled build, `npm run build` first) or the
   * sources through tsx (`src`; tsx's \`__name\` wrappers make every named closure bigger).
   */
  build: z.enum(['dist', 'src']).default('dist'),
  /** Another compiled build (its `cli/main.js`) measured too, labels ending in `(before)`. */
  before: z.string().min(1).optional(),
});
const args = parseBenchArgs('bench/idle-memory.ts', Args);

const API_KEY = 'bench_api_key_0123456789';
const AUTHTOKEN = 'bench_authtoken_0123456789';
const ECHO_URL = 'tcp://echo.bench:7000';
const NS = 'endpoint-binder';
const PROBE = pathToFileURL(join(import.meta.dirname, 'support', 'memory-probe.ts')).href;
const NODE_FLAGS = ['--expose-gc', '--import', PROBE];

interface Usage {
  rss: number;
  heapTotal: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
}
const Answer = z.object({
  seq: z.number(),
  usage: z.object({
    rss: z.number(),
    heapTotal: z.number(),
    heapUsed: z.number(),
    external: z.number(),
    arrayBuffers: z.number(),
  }),
  snapshot: z.string().optional(),
});

function log(line: string): void {
  process.stdout.write(line + '\n');
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let seq = 0;
/** Full GC and memoryUsage() in process `pid` (and a heap snapshot if asked), via its probe. */
async function probe(pid: number, snapshot: boolean): Promise<z.infer<typeof Answer>> {
  const paths = memoryProbePaths(pid);
  const mine = ++seq;
  await writeFile(paths.request, JSON.stringify({ seq: mine, snapshot }));
  process.kill(pid, 'SIGUSR2');
  for (let waited = 0; waited < 300_000; waited += 100) {
    await sleep(100);
    const text = await readFile(paths.answer, 'utf8').catch(() => undefined);
    if (!text) continue;
    const a = Answer.parse(JSON.parse(text));
    if (a.seq === mine) return a;
  }
  throw new Error(`memory probe in ${pid}: no answer within 300 s (was it started with the probe?)`);
}

interface Subject {
  label: string;
  pid: number;
  port: number;
}

const KEYS = ['rss', 'heapUsed', 'external', 'arrayBuffers', 'heapTotal'] as const;
const kib = (bytes: number) => (bytes / 1024).toFixed(2);

/** Per held connection, KiB: each memoryUsage() field and rss − heapTotal (outside V8's heap, roughly). */
function perConnection(from: Usage, to: Usage, n: number): string {
  const fields = KEYS.map((k) => `${k} ${kib((to[k] - from[k]) / n)}`);
  const native = to.rss - to.heapTotal - (from.rss - from.heapTotal);
  return `${fields.join(', ')}, rss-heapTotal ${kib(native / n)}`;
}

/**
 * 0 → N held is what a deployment sees; N/2 → N (the marginal cost) leaves out what the first
 * connections pay once (modules loaded lazily, compiled code, the v2 sessions' own buffers).
 * With snapshots, they are taken at N/2 and N (so their difference is marginal too), and the
 * rss figures are not meaningful (writing a snapshot grows the process).
 */
async function measure(s: Subject): Promise<void> {
  await bounded(`${s.label} warm-up`, connectionRate(s.port, 200, 16)); // sessions, JIT, pools
  await sleep(1000);
  const snap = args.snapshot !== 'no';
  const a0 = await probe(s.pid, false);
  const first = await bounded(`${s.label} hold`, holdIdle(s.port, Math.floor(args.idle / 2)));
  await sleep(2000);
  const aHalf = await probe(s.pid, snap);
  const second = await bounded(`${s.label} hold`, holdIdle(s.port, args.idle - Math.floor(args.idle / 2)));
  await sleep(2000);
  const rssBeforeGc = (await rssMiB(s.pid)) * 1024 * 1024;
  const aN = await probe(s.pid, snap);
  const held = [...first.held, ...second.held];
  for (const h of held) h.destroy();
  await sleep(2000);
  const aClosed = await probe(s.pid, false);
  const failed = first.failed + second.failed;
  log(
    `${s.label}: held ${held.length}${failed ? ` (${failed} failed before their echo)` : ''}${snap ? ' (rss: see the snapshot note)' : ''}`,
  );
  log(`    0 → N    per conn KiB: ${perConnection(a0.usage, aN.usage, held.length)}`);
  log(`    N/2 → N  per conn KiB: ${perConnection(aHalf.usage, aN.usage, second.held.length)}`);
  log(
    `    0 → N    rss without the forced GC at N: ${kib((rssBeforeGc - a0.usage.rss) / held.length)} KiB per conn`,
  );
  log(`    closed   per conn KiB: ${perConnection(a0.usage, aClosed.usage, held.length)}`);
  if (aHalf.snapshot && aN.snapshot) {
    const [b, a] = [await summarizeHeapSnapshot(aHalf.snapshot), await summarizeHeapSnapshot(aN.snapshot)];
    for (const r of perConnectionGrowth(b, a, second.held.length, 25))
      log(`    ${r.bytes.toFixed(0).padStart(6)} B  ${r.count.toFixed(2).padStart(6)} ×  ${r.group}`);
    if (args.snapshot === 'keep') log(`    snapshots kept: ${aHalf.snapshot} ${aN.snapshot}`);
    else for (const f of [aHalf.snapshot, aN.snapshot]) await rm(f, { force: true });
  }
}

async function ingressRole(role: 'ingress' | 'ingress-tls') {
  return spawnJson(
    ['bench/datapath-roles.ts', role],
    { BENCH_API_KEY: API_KEY, BENCH_AUTHTOKEN: AUTHTOKEN },
    (o) =>
      typeof o['ingress'] === 'string'
        ? { api: o['api'] as string, ingress: o['ingress'], ca: typeof o['ca'] === 'string' ? o['ca'] : '' }
        : undefined,
  );
}

async function floorRole(argv: string[]): Promise<{ pid: number; port: number }> {
  const r = await spawnJson([...NODE_FLAGS, 'bench/idle-memory-roles.ts', ...argv], {}, (o) =>
    typeof o['port'] === 'number' ? o['port'] : undefined,
  );
  return { pid: r.child.pid!, port: r.value };
}

async function main(): Promise<void> {
  log(`idle-memory bench: node ${process.version}, ${args.idle} idle connections per subject, forced GC`);
  log(`load average at start: ${await loadAverage()}`);
  const up = await spawnJson(['bench/datapath-roles.ts', 'upstream'], {}, (o) =>
    typeof o['echo'] === 'number' ? o['echo'] : undefined,
  );
  const ingresses = { plain: await ingressRole('ingress'), tls: await ingressRole('ingress-tls') };
  for (const ing of Object.values(ingresses))
    await createTcpEndpoint(ing.value.api, API_KEY, ECHO_URL, up.value);
  const { dir, caFile, sim, kubeconfig } = await forwarderWorld(
    'idle-memory-bench-',
    NS,
    ingresses.tls.value.ca,
  );
  const only = args.only ? new RegExp(args.only) : undefined;
  const wanted = (label: string) => !only || only.test(label);

  const starts: [string, () => Promise<{ pid: number; port: number }>][] = [
    ['floor sockets', () => floorRole(['sockets'])],
    ...(['h2-relay', 'h2-bare'] as const).flatMap((role) =>
      (['plain', 'tls'] as const).map((sec): [string, () => Promise<{ pid: number; port: number }>] => [
        `floor ${role} ${sec}`,
        () => floorRole([role, ingresses[sec].value.ingress, ECHO_URL, sec, sec === 'tls' ? caFile : '-']),
      ]),
    ),
  ];
  const mainJs = (dist: string) => join(dist, 'cli', 'main.js');
  const entries: [string, string | undefined][] = [['', args.build === 'dist' ? mainJs('dist') : undefined]];
  if (args.before) entries.push([' (before)', mainJs(args.before)]);
  for (const protocol of ['v2', 'v1'] as const)
    for (const sec of ['plain', 'tls'] as const)
      for (const [suffix, entry] of entries)
        starts.push([
          `fwd ${protocol} ${sec}${suffix}`,
          async () => {
            const port = await freePort();
            const child = await startForwarderProcess({
              sim,
              kubeconfig,
              dir,
              release: `mem-${protocol}-${sec}${suffix ? '-before' : ''}`,
              namespace: NS,
              authtoken: AUTHTOKEN,
              ingress: {
                address: ingresses[sec].value.ingress,
                tls: sec === 'tls',
                protocol,
                ...(sec === 'tls' ? { caFile } : {}),
              },
              routes: [[port, ECHO_URL]],
              nodeFlags: NODE_FLAGS,
              ...(entry ? { entry } : {}),
            });
            return { pid: child.pid!, port };
          },
        ]);
  // One subject at a time: started, measured, killed, so each has the machine to itself.
  for (const [label, start] of starts) {
    if (!wanted(label)) continue;
    const { pid, port } = await start();
    await measure({ label, pid, port });
    process.kill(pid, 'SIGKILL');
    const probeFiles = memoryProbePaths(pid);
    for (const f of [probeFiles.request, probeFiles.answer]) await rm(f, { force: true });
  }
  log(`load average at end: ${await loadAverage()}`);
  await sim.stop();
}

try {
  await main();
} finally {
  for (const c of children) c.kill('SIGKILL');
}
