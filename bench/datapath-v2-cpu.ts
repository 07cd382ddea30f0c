/**
 * CPU per forwarded connection over TLS, the figure of issue #27's "v2 ≤ 0.3× v1 and ≤ 1.2× the
 * plain relay", measured alone and alternated: the minimal relay (plain, bench/datapath-roles.ts
 * `relay`), the forwarder over v1 TLS and over v2 TLS, and with `--before <dir>` the v2 TLS
 * forwarder of another checkout (its own node_modules) beside this one's, so a change is compared
 * inside one run. All at 0 ms against the mock ingress, each in its own process; per round and
 * path `--conns` connections `--concurrency` at a time (connect, 1-byte echo, close), CPU of the
 * hop's process and the ingress's process from /proc. The paths alternate every round.
 * `--cpu-prof <dir>` starts the forwarders with `node --cpu-prof` (written when they exit).
 *
 *   npx tsx bench/datapath-v2-cpu.ts [--conns 2000 --concurrency 16 --rounds 3] [--before /tmp/main-copy] [--cpu-prof /tmp/prof]
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
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

const Args = z.object({
  conns: z.coerce.number().int().min(100).max(100_000).default(2000),
  concurrency: z.coerce.number().int().min(1).max(256).default(16),
  rounds: z.coerce.number().int().min(1).max(20).default(3),
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
}

function log(line: string): void {
  process.stdout.write(line + '\n');
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

async function measure(p: Path): Promise<void> {
  const pid = p.hop.pid!;
  const [h0, i0] = [await cpuSeconds(pid), await cpuSeconds(p.ingressPid)];
  p.rates.push(await bounded(`${p.label} rate`, connectionRate(p.port, args.conns, args.concurrency)));
  const [h1, i1] = [await cpuSeconds(pid), await cpuSeconds(p.ingressPid)];
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
  const plain = await ingressRole('ingress');
  const tls = await ingressRole('ingress-tls');
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
  });
  const relay = await spawnJson(
    ['bench/datapath-roles.ts', 'relay', plain.value.ingress, ECHO_URL, 'plain'],
    {},
    (o) => (typeof o['relay'] === 'number' ? o['relay'] : undefined),
  );
  const paths: Path[] = [path('relay plain', relay.value, relay.child, plain.child.pid!)];
  const variants: [string, 'v1' | 'v2', string | undefined][] = [
    ['fwd v1 tls', 'v1', undefined],
    ['fwd v2 tls', 'v2', undefined],
    ...(args.before ? [['fwd v2 tls before', 'v2', args.before] as [string, 'v2', string]] : []),
  ];
  for (const [label, protocol, cwd] of variants) {
    const port = await freePort();
    const child = await startForwarderProcess({
      sim,
      kubeconfig,
      dir,
      release: `cpu-${paths.length}`,
      namespace: NS,
      authtoken: AUTHTOKEN,
      ingress: { address: tls.value.ingress, tls: true, protocol, caFile },
      routes: [[port, ECHO_URL]],
      ...(args['cpu-prof'] ? { nodeFlags: ['--cpu-prof', `--cpu-prof-dir=${args['cpu-prof']}`] } : {}),
      ...(cwd ? { cwd } : {}),
    });
    log(`${label}: pid ${child.pid}`);
    paths.push(path(label, port, child, tls.child.pid!));
  }
  for (const p of paths) await bounded(`${p.label} warm-up`, connectionRate(p.port, 300, args.concurrency));
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
  const [relayP, v1, v2] = paths as [Path, Path, Path, Path?];
  log(
    `ratio fwd v2 tls / fwd v1 tls: ${(us(v2) / us(v1)).toFixed(3)}; / relay plain: ${(us(v2) / us(relayP)).toFixed(3)}`,
  );
  const before = paths[3];
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
