/**
 * CPU per forwarded connection over TLS, the figure of issue #27's "v2 ≤ 0.3× v1 and ≤ 1.2× the
 * plain relay", measured alone and alternated: the minimal relay (plain, bench/datapath-roles.ts
 * `relay`), the forwarder over v1 TLS, over v2 TLS and over v2 plain (h2c), and with `--before <dir>` the v2 TLS
 * forwarder of another checkout (its own node_modules) beside this one's, so a change is compared
 * inside one run. All at 0 ms against the mock ingress, each in its own process; per round and
 * path `--conns` connections `--concurrency` at a time (connect, 1-byte echo, close), CPU of the
 * hop's process and the ingress's process from /proc. The paths alternate every round.
 * The first `--warmup` connections of each path are not counted (the JIT is still compiling).
 * `--cpu-prof <dir>` starts the forwarders with `node --cpu-prof` (written when they exit).
 *
 *   npx tsx bench/datapath-v2-cpu.ts [--conns 2000 --concurrency 16 --rounds 3 --warmup 2000] [--before /tmp/main-copy] [--cpu-prof /tmp/prof]
 */
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import type { ChildProcess } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { startKubesim } from '../src/kubesim/index.js';
import { parseBenchArgs } from './support/args.js';
import { createTcpEndpoint } from './support/endpoints.js';
import { startForwarderProcess } from './support/forwarder-process.js';
import { bounded, connectionRate, cpuSeconds, freePort, loadAverage, median } from './support/load.js';
import { children, spawnJson } from './support/spawn-json.js';
import { ingressRole } from './datapath-v2-forwarder.js';

const Args = z.object({
  conns: z.coerce.number().int().min(100).max(100_000).default(2000),
  concurrency: z.coerce.number().int().min(1).max(256).default(16),
  rounds: z.coerce.number().int().min(1).max(20).default(3),
  /** Connections per path before the first round: the first thousands run before the JIT settles. */
  warmup: z.coerce.number().int().min(0).max(100_000).default(2000),
  before: z.string().min(1).optional(),
  'cpu-prof': z.string().min(1).optional(),
});
const args = parseBenchArgs('bench/datapath-v2-cpu.ts', Args);

const API_KEY = 'bench_api_key_0123456789';
const AUTHTOKEN = 'bench_authtoken_0123456789';
const ECHO_URL = 'tcp://echo.bench:7000';
const NS = 'endpoint-binder';

interface Path {
  label: string;
  port: number;
  hop: ChildProcess;
  ingressPid: number;
  hopUs: number[];
  ingressUs: number[];
  rates: number[];
  /** The hop's user and system CPU, and its read and write system calls, summed over the rounds. */
  hopSplit: Usage;
}

interface Usage {
  userS: number;
  sysS: number;
  reads: number;
  writes: number;
  conns: number;
}

/** A process's user and system CPU seconds and its read/write system call counts (/proc). */
async function usage(pid: number): Promise<Omit<Usage, 'conns'>> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const io = await readFile(`/proc/${pid}/io`, 'utf8');
  const count = (k: string) => Number(new RegExp(`^${k}: (\\d+)$`, 'm').exec(io)?.[1] ?? NaN);
  return {
    userS: Number(f[11]) / 100,
    sysS: Number(f[12]) / 100,
    reads: count('syscr'),
    writes: count('syscw'),
  };
}

function log(line: string): void {
  process.stdout.write(line + '\n');
}

async function measure(p: Path): Promise<void> {
  const pid = p.hop.pid!;
  const [h0, i0, u0] = [await cpuSeconds(pid), await cpuSeconds(p.ingressPid), await usage(pid)];
  const t0 = process.hrtime.bigint() / 1000n;
  p.rates.push(await bounded(`${p.label} rate`, connectionRate(p.port, args.conns, args.concurrency)));
  const t1 = process.hrtime.bigint() / 1000n;
  const [h1, i1, u1] = [await cpuSeconds(pid), await cpuSeconds(p.ingressPid), await usage(pid)];
  const split = p.hopSplit;
  split.userS += u1.userS - u0.userS;
  split.sysS += u1.sysS - u0.sysS;
  split.reads += u1.reads - u0.reads;
  split.writes += u1.writes - u0.writes;
  split.conns += args.conns;
  // The profile's timestamps are the same monotonic clock (µs): this window is the round's.
  if (args['cpu-prof']) log(`profile window pid ${pid} ${p.label}: ${t0} ${t1}`);
  p.hopUs.push(((h1 - h0) / args.conns) * 1e6);
  p.ingressUs.push(((i1 - i0) / args.conns) * 1e6);
}

/** SIGTERM, so a `--cpu-prof` forwarder writes its profile; SIGKILL after 10 s. */
async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
}

async function main(): Promise<void> {
  log(
    `datapath-v2-cpu bench: node ${process.version}, ${args.rounds} rounds of ${args.conns} connections x${args.concurrency}${args.before ? `, before: ${args.before}` : ''}`,
  );
  log(`load average at start: ${await loadAverage()}`);
  const up = await spawnJson(['bench/datapath-roles.ts', 'upstream'], {}, (o) =>
    typeof o['echo'] === 'number' ? { echo: o['echo'] } : undefined,
  );
  const credentials = { apiKey: API_KEY, authtoken: AUTHTOKEN };
  const plain = await ingressRole('ingress', credentials);
  const tls = await ingressRole('ingress-tls', credentials);
  for (const ing of [plain, tls]) await createTcpEndpoint(ing.value.api, API_KEY, ECHO_URL, up.value.echo);
  const dir = await mkdtemp(join(tmpdir(), 'datapath-v2-cpu-'));
  const caFile = join(dir, 'ingress-ca.pem');
  await writeFile(caFile, tls.value.ca);
  const sim = await startKubesim({ initialNamespaces: ['default', NS] });
  const kubeconfig = join(dir, 'kubeconfig');
  await sim.writeKubeconfig(kubeconfig);

  const path = (label: string, port: number, hop: ChildProcess, ingressPid: number): Path => ({
    label,
    port,
    hop,
    ingressPid,
    hopUs: [],
    ingressUs: [],
    rates: [],
    hopSplit: { userS: 0, sysS: 0, reads: 0, writes: 0, conns: 0 },
  });
  const relay = await spawnJson(
    ['bench/datapath-roles.ts', 'relay', plain.value.ingress, ECHO_URL, 'plain'],
    {},
    (o) => (typeof o['relay'] === 'number' ? o['relay'] : undefined),
  );
  const paths: Path[] = [path('relay plain', relay.value, relay.child, plain.child.pid!)];
  type Variant = [label: string, protocol: 'v1' | 'v2', tls: boolean, cwd: string | undefined];
  const variants: Variant[] = [
    ['fwd v1 tls', 'v1', true, undefined],
    ['fwd v2 tls', 'v2', true, undefined],
    ...(args.before ? [['fwd v2 tls before', 'v2', true, args.before] as Variant] : []),
    // h2c: what the v2 forwarder costs without TLS, to tell the TLS share from the rest.
    ['fwd v2 plain', 'v2', false, undefined],
  ];
  for (const [label, protocol, overTls, cwd] of variants) {
    const ing = overTls ? tls : plain;
    const port = await freePort();
    const child = await startForwarderProcess({
      sim,
      kubeconfig,
      dir,
      release: `cpu-${paths.length}`,
      namespace: NS,
      authtoken: AUTHTOKEN,
      ingress: { address: ing.value.ingress, tls: overTls, protocol, ...(overTls ? { caFile } : {}) },
      routes: [[port, ECHO_URL]],
      ...(args['cpu-prof'] ? { nodeFlags: ['--cpu-prof', `--cpu-prof-dir=${args['cpu-prof']}`] } : {}),
      ...(cwd ? { cwd } : {}),
    });
    log(`${label}: pid ${child.pid}`);
    paths.push(path(label, port, child, ing.child.pid!));
  }
  for (const p of paths)
    if (args.warmup > 0)
      await bounded(`${p.label} warm-up`, connectionRate(p.port, args.warmup, args.concurrency));
  for (let round = 0; round < args.rounds; round++) {
    // Alternate the order, so no path always runs right after the same neighbour.
    const order = round % 2 === 0 ? paths : [...paths].reverse();
    for (const p of order) await measure(p);
    log(
      `round ${round + 1}: ${order.map((p) => `${p.label} ${p.hopUs.at(-1)!.toFixed(0)} µs`).join(', ')}; load ${await loadAverage()}`,
    );
  }
  const us = (p: Path) => median(p.hopUs);
  for (const p of paths)
    log(
      `${p.label.padEnd(18)} | ${median(p.rates).toFixed(0)} conn/s | CPU/conn hop ${us(p).toFixed(0)} µs (rounds ${p.hopUs.map((x) => x.toFixed(0)).join(', ')}) + ingress ${median(p.ingressUs).toFixed(0)} µs`,
    );
  for (const { label, hopSplit: u } of paths)
    log(
      `${label.padEnd(18)} | all rounds: user ${((u.userS / u.conns) * 1e6).toFixed(0)} µs + system ${((u.sysS / u.conns) * 1e6).toFixed(0)} µs per connection; ${(u.reads / u.conns).toFixed(1)} reads + ${(u.writes / u.conns).toFixed(1)} writes (system calls) per connection`,
    );
  const byLabel = (label: string) => paths.find((p) => p.label === label);
  const [relayP, v1, v2] = [byLabel('relay plain')!, byLabel('fwd v1 tls')!, byLabel('fwd v2 tls')!];
  log(
    `ratio fwd v2 tls / fwd v1 tls: ${(us(v2) / us(v1)).toFixed(3)}; / relay plain: ${(us(v2) / us(relayP)).toFixed(3)}`,
  );
  const before = byLabel('fwd v2 tls before');
  if (before) log(`ratio fwd v2 tls / before: ${(us(v2) / us(before)).toFixed(3)}`);
  log(`load average at end: ${await loadAverage()}`);
  for (const p of paths) await stop(p.hop);
  await sim.stop();
}

try {
  await main();
} finally {
  for (const c of children) c.kill('SIGKILL');
}
