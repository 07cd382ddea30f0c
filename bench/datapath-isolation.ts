/**
 * Isolation between endpoints and bursts across a round trip, through the real forwarder
 * (issue #27, "Benchmarks": Isolation and Burst), over ingress protocol v1 and v2 (forced), plain
 * and TLS, against the mock ingress at its default budgets (bench/isolation-roles.ts).
 *
 * Isolation, per transport, in one forwarder with three ports (A-silent, A-hole, B):
 *   idle      B's clients alone: `--samples` sequential connections `--gap` ms apart, each timed
 *             from the client's connect to the echo of its first byte (sent at once)
 *   one-byte  the same while endpoint A has `--crowd` clients that each sent one byte and wait
 *             (A's upstream accepts and never answers); a client that is reset connects again,
 *             so A keeps `--crowd` clients throughout
 *   hole      the same while endpoint A has `--holeClients` such clients and its upstream drops
 *             SYNs (a listening socket that never accepts, its queue full: the ingress's upstream
 *             connect hangs until ERR_731)
 *   after     right after A's clients left (recovery), after each attack
 *   ctl-1byte, ctl-hole  (`--control 1`) the same two attacks on a second forwarder of their own
 *             (same ingress, same machine): B's p99 under the same CPU load without sharing a
 *             forwarder with A, the baseline that tells the forwarder's fairness from the machine
 * A's clients come from 127.0.0.2 (one-byte) and 127.0.0.4 (hole), B's from 127.0.0.3: other
 * pods than B's (the forwarder also shares its budget per source address, and one pod's own
 * clients may exhaust that pod's share).
 * Target: B's p99 under each attack ≤ 2× its idle p99.
 *
 * Burst, per transport: `--burst` clients connect at once (one echo each) to a fresh forwarder
 * whose ingress is `--rtt` ms away (bench/datapath-delay-proxy.ts between forwarder and ingress);
 * served and failed counts and the time until the last was served. Target: all served.
 *
 *   npm run bench:isolation -- [--samples 300 --gap 25 --crowd 1100 --holeClients 400 --burst 2000 --rtt 200]
 *
 * The client crowds, the silent upstream and the delay proxy share this process; B's clients
 * (`--samplerProcess 1`, the default), the forwarder, the ingress, the echo upstream and the black
 * hole are processes of their own.
 */
import { appendFileSync } from 'node:fs';
import { readFile, mkdtemp, writeFile } from 'node:fs/promises';
import type { ChildProcess } from 'node:child_process';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { startKubesim, type Kubesim } from '../src/kubesim/index.js';
import { parseHostPort } from '../src/net/host-port.js';
import { startDelayProxy } from './datapath-delay-proxy.js';
import { parseBenchArgs } from './support/args.js';
import { createTcpEndpoint } from './support/endpoints.js';
import { startForwarderProcess } from './support/forwarder-process.js';
import {
  burst,
  OneByteCrowd,
  quantile,
  sampleEchoes,
  slowest,
  timedEcho,
  type BurstResult,
  type Samples,
} from './support/isolation-clients.js';
import {
  bounded,
  cpuSeconds,
  freePorts,
  loadAverage,
  settleTimeWait,
  timeWaitSockets,
} from './support/load.js';
import { sampleInOwnProcess } from './support/isolation-sampler.js';
import { children, spawnJson } from './support/spawn-json.js';

const Args = z.object({
  samples: z.coerce.number().int().min(20).max(10_000).default(300),
  gap: z.coerce.number().int().min(0).max(1000).default(25),
  crowd: z.coerce.number().int().min(1).max(5000).default(1100),
  holeClients: z.coerce.number().int().min(1).max(5000).default(400),
  burst: z.coerce.number().int().min(1).max(10_000).default(2000),
  rtt: z.coerce.number().int().min(0).max(1000).default(200),
  settle: z.coerce.number().int().min(0).max(60_000).default(3000),
  sec: z.enum(['plain', 'tls', 'both']).default('both'),
  protocol: z.enum(['v1', 'v2', 'both']).default('both'),
  part: z.enum(['isolation', 'burst', 'both']).default('both'),
  /** 1: also run each attack against a forwarder of its own (B's p99 under the same CPU load). */
  control: z.coerce.number().int().min(0).max(1).default(1),
  /** The ingress's max_handshakes_per_source (0: the mock's default, 64), to show what that budget costs. */
  ingressHandshakesPerSource: z.coerce.number().int().min(0).max(100_000).default(0),
  /** 1: B's samples in a process of their own (support/isolation-sampler.ts); 0: in this one, beside A's crowd. */
  samplerProcess: z.coerce.number().int().min(0).max(1).default(1),
  /** The burst forwarder's limits.prefaceTimeoutMs (0: its default, 10 s): how long a client may wait. */
  burstPrefaceTimeoutMs: z.coerce.number().int().min(0).max(600_000).default(0),
  /**
   * Each burst and attack phase first waits (up to 70 s) for fewer TCP sockets than this in
   * TIME_WAIT (0: no wait): the previous run's leave every loopback connect() slower
   * (load.ts timeWaitSockets), which made one run of the same code 1.5–3× slower than the next.
   */
  maxTimeWait: z.coerce.number().int().min(0).max(1_000_000).default(2000),
});
type Args = z.infer<typeof Args>;
const args = parseBenchArgs('bench/datapath-isolation.ts', Args);

const API_KEY = 'bench_api_key_0123456789';
const AUTHTOKEN = 'bench_authtoken_0123456789';
const NS = 'endpoint-binder';
const A_SILENT_URL = 'tcp://a-silent.bench:7100';
const A_HOLE_URL = 'tcp://a-hole.bench:7101';
const B_URL = 'tcp://b.bench:7102';
/** Three pods: the one-byte crowd, the black-holed endpoint's clients, and B's client. */
const A_SOURCE = '127.0.0.2';
const A_HOLE_SOURCE = '127.0.0.4';
const B_SOURCE = '127.0.0.3';
const ECHO_TIMEOUT_MS = 30_000;

type Sec = 'plain' | 'tls';
type Protocol = 'v1' | 'v2';

function log(line: string): void {
  process.stdout.write(line + '\n');
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ms1 = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : 'failed');

/**
 * An upstream that reads and never answers (endpoint A of the one-byte attack); it closes when
 * its client does (not allowHalfOpen), so A's clients leaving frees what they held.
 */
async function silentUpstream(): Promise<{ port: number; open(): number; server: Server }> {
  const sockets = new Set<Socket>();
  const server = createServer((s) => {
    sockets.add(s);
    s.on('error', () => undefined);
    s.resume();
    s.once('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen({ port: 0, host: '127.0.0.1', backlog: 4096 }, r));
  return { port: (server.address() as AddressInfo).port, open: () => sockets.size, server };
}

/**
 * The black hole's accept queue is filled here (it never accepts): after that its kernel drops
 * every SYN. Two connections fill a backlog of 1; a third that does not connect within 500 ms
 * shows it is full.
 */
async function blackHole(): Promise<number> {
  const hole = await spawnJson(['bench/isolation-roles.ts', 'black-hole'], {}, (o) =>
    typeof o['port'] === 'number' ? o['port'] : undefined,
  );
  for (let i = 0; i < 8; i++) {
    const s = connect(hole.value, '127.0.0.1');
    s.on('error', () => undefined);
    const connected = await new Promise<boolean>((resolve) => {
      s.once('connect', () => resolve(true));
      setTimeout(() => resolve(false), 500);
    });
    if (!connected) {
      s.destroy();
      return hole.value;
    }
  }
  throw new Error('the black hole accepted 8 connections: its accept queue never filled');
}

/**
 * Counts the forwarder's `forwarder connection` lines by outcome and code (at `info` only the
 * refusals and give-ups are logged, at `debug` every connection) and its other warnings by `msg`.
 */
function countOutcomes(child: ChildProcess): Map<string, number> {
  const counts = new Map<string, number>();
  const add = (k: string) => counts.set(k, (counts.get(k) ?? 0) + 1);
  let buf = '';
  const tee = process.env['BENCH_FORWARDER_LOG'];
  child.stdout?.on('data', (c: string | Buffer) => {
    if (tee) appendFileSync(tee, c);
    buf += c.toString();
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      const code = /"code":"([^"]+)"/.exec(line)?.[1];
      if (line.includes('"msg":"forwarder connection"')) {
        const outcome = /"outcome":"([^"]+)"/.exec(line)?.[1] ?? '?';
        // The text without its numbers (times, ports), so one cause is one key.
        const error = /"error":"([^"]{0,48})/.exec(line)?.[1]?.replace(/\d+/g, 'N');
        add(`${outcome}${code ? ` ${code}` : ''}${error && code ? ` (${error}…)` : ''}`);
      } else if (line.includes('"level":40') || line.includes('"level":50')) {
        add(`warn: ${/"msg":"([^"]+)"/.exec(line)?.[1] ?? '?'}${code ? ` ${code}` : ''}`);
      }
    }
  });
  return counts;
}

const show = (m: ReadonlyMap<string, number>) =>
  m.size === 0 ? 'none' : [...m].map(([k, v]) => `${k} ${v}`).join(', ');

function sampleLine(label: string, s: Samples, idleP99?: number): string {
  const p99 = quantile(s, 0.99);
  const ratio = idleP99 === undefined ? '' : `, ${(p99 / idleP99).toFixed(2)}× idle p99`;
  const failed = s.n - s.ms.length;
  return `  ${label.padEnd(10)} B: p50 ${ms1(quantile(s, 0.5))} ms, p99 ${ms1(p99)} ms${ratio}, max ${ms1(Math.max(...s.ms))} ms; ${s.ms.length}/${s.n} served${failed ? ` (failed: ${show(s.failures)})` : ''}`;
}

interface Ingress {
  /** The ingress's warn lines (refusals, evictions) by msg and code. */
  warnings: Map<string, number>;
  api: string;
  ingress: string;
  ca: string;
  child: ChildProcess;
}

async function startIngress(sec: Sec): Promise<Ingress> {
  const ing = await spawnJson(
    ['bench/isolation-roles.ts', 'ingress', sec, String(args.ingressHandshakesPerSource)],
    { BENCH_API_KEY: API_KEY, BENCH_AUTHTOKEN: AUTHTOKEN },
    (o) =>
      typeof o['ingress'] === 'string'
        ? { api: String(o['api']), ingress: o['ingress'], ca: typeof o['ca'] === 'string' ? o['ca'] : '' }
        : undefined,
  );
  return { ...ing.value, child: ing.child, warnings: countOutcomes(ing.child) };
}

interface World {
  sim: Kubesim;
  kubeconfig: string;
  dir: string;
  echo: number;
  silent: Awaited<ReturnType<typeof silentUpstream>>;
  hole: number;
}

async function forwarder(
  w: World,
  release: string,
  sec: Sec,
  protocol: Protocol,
  address: string,
  caFile: string,
  routes: [number, string][],
  config?: Record<string, unknown>,
): Promise<ChildProcess> {
  return startForwarderProcess({
    sim: w.sim,
    kubeconfig: w.kubeconfig,
    dir: w.dir,
    release,
    namespace: NS,
    authtoken: AUTHTOKEN,
    ingress: { address, tls: sec === 'tls', protocol, ...(sec === 'tls' ? { caFile } : {}) },
    routes,
    // The forwarder's own per-port and per-source ingress shares (512 by default; the shared
    // helper raises them to hold 2,000 idle connections): the isolation figures are about them.
    config: { limits: { maxConnections: 20_000, maxConnectionsPerPort: 20_000 }, ...config },
  });
}

async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await exited;
}

/** Polls until `value()` has not changed for `stableMs` (or `maxMs` passed): the attack settled. */
async function settled(value: () => number, stableMs: number, maxMs: number): Promise<void> {
  const end = Date.now() + maxMs;
  let last = value();
  let since = Date.now();
  while (Date.now() < end && Date.now() - since < stableMs) {
    await sleep(250);
    const v = value();
    if (v !== last) [last, since] = [v, Date.now()];
  }
}

interface Sampler {
  sample: (phase: string) => Promise<Samples>;
  idleP99: number;
}

/**
 * B sampled while a crowd of A's clients is on `port` (of the forwarder whose give-ups
 * `refusals` counts), then again right after the crowd left.
 */
async function underAttack(
  w: World,
  b: Sampler,
  label: string,
  crowdAt: { port: number; source: string; size: number; refusals: Map<string, number> },
): Promise<void> {
  log(`  ${label}: TIME_WAIT sockets ${(await quietSockets()) ?? 'unknown'} before A's crowd`);
  const crowd = new OneByteCrowd(crowdAt.port, crowdAt.source);
  crowd.start(crowdAt.size);
  await settled(() => w.silent.open() + crowd.endedByPeer, 2000, 30_000);
  await sleep(args.settle);
  const refusals0 = new Map(crowdAt.refusals);
  const held0 = w.silent.open();
  const s = await b.sample(label);
  const meanwhile = new Map(
    [...crowdAt.refusals].map(([k, v]) => [k, v - (refusals0.get(k) ?? 0)] as const).filter(([, v]) => v > 0),
  );
  log(sampleLine(label, s, b.idleP99));
  log(
    `    A: ${crowd.open} clients open, ${crowd.endedByPeer} ended by the forwarder and reconnected, ${crowd.bytesReceived} bytes received; A's silent upstream holds ${held0} → ${w.silent.open()} connections; A's give-ups meanwhile: ${show(meanwhile)}`,
  );
  log(`    slowest B: ${slowest(s, 3, crowd.endedAt, 250)}`);
  crowd.stop();
  log(sampleLine('after', await b.sample(`after ${label}`), b.idleP99));
}

/** Waits for the TIME_WAIT sockets to drain below `--maxTimeWait` (at most 70 s); their count then. */
function quietSockets(): Promise<number | undefined> {
  return args.maxTimeWait > 0 ? settleTimeWait(args.maxTimeWait, 70_000) : timeWaitSockets();
}

/** One transport's run: the shared processes, the transport, its fresh ingress and CA file. */
interface Run {
  w: World;
  sec: Sec;
  protocol: Protocol;
  ing: Ingress;
  caFile: string;
}

async function isolation({ w, sec, protocol, ing, caFile }: Run): Promise<void> {
  const [a1, a2, b] = (await freePorts(3)) as [number, number, number];
  const fwd = await forwarder(w, `iso-${protocol}-${sec}`, sec, protocol, ing.ingress, caFile, [
    [a1, A_SILENT_URL],
    [a2, A_HOLE_URL],
    [b, B_URL],
  ]);
  const refusals = countOutcomes(fwd);
  let other: ChildProcess | undefined;
  const sample = (phase: string) =>
    bounded(
      `${sec} ${protocol} ${phase}`,
      args.samplerProcess
        ? sampleInOwnProcess(b, B_SOURCE, args.samples, args.gap, ECHO_TIMEOUT_MS)
        : sampleEchoes(b, B_SOURCE, args.samples, args.gap, ECHO_TIMEOUT_MS),
      600_000,
    );
  try {
    for (let i = 0; i < 20; i++) await timedEcho(b, B_SOURCE, ECHO_TIMEOUT_MS); // warm-up: sessions, JIT
    const tw = await quietSockets();
    log(
      `isolation ${sec} ${protocol} (load average ${await loadAverage()}; TIME_WAIT sockets ${tw ?? 'unknown'}):`,
    );
    const idle = await sample('idle');
    log(sampleLine('idle', idle));
    const s: Sampler = { sample, idleP99: quantile(idle, 0.99) };
    await underAttack(w, s, 'one-byte', { port: a1, source: A_SOURCE, size: args.crowd, refusals });
    await underAttack(w, s, 'hole', { port: a2, source: A_HOLE_SOURCE, size: args.holeClients, refusals });
    if (args.control) {
      // The same attacks on a forwarder of their own (same ingress, same machine): what B loses
      // to the machine's CPU alone, not to sharing a forwarder with A.
      const [c1, c2] = (await freePorts(2, [a1, a2, b])) as [number, number];
      other = await forwarder(w, `ctl-${protocol}-${sec}`, sec, protocol, ing.ingress, caFile, [
        [c1, A_SILENT_URL],
        [c2, A_HOLE_URL],
      ]);
      const otherRefusals = countOutcomes(other);
      await underAttack(w, s, 'ctl-1byte', {
        port: c1,
        source: A_SOURCE,
        size: args.crowd,
        refusals: otherRefusals,
      });
      await underAttack(w, s, 'ctl-hole', {
        port: c2,
        source: A_HOLE_SOURCE,
        size: args.holeClients,
        refusals: otherRefusals,
      });
    }
    log(`  B's forwarder, give-ups by code, whole run: ${show(refusals)}`);
  } finally {
    await stopProcess(fwd);
    if (other) await stopProcess(other);
  }
}

function burstLine(sec: Sec, protocol: Protocol, r: BurstResult, accepted: number): string {
  const p = (q: number) => r.ms[Math.min(r.ms.length - 1, Math.floor(q * r.ms.length))] ?? NaN;
  const all = r.failed === 0 ? `all served in ${(r.wallMs / 1000).toFixed(2)} s` : `NOT all served`;
  return [
    `burst ${sec} ${protocol} at ${args.rtt} ms RTT: ${r.served}/${args.burst} served, ${r.failed} failed; ${all}`,
    `  connect → echo p50 ${ms1(p(0.5))} ms, p99 ${ms1(p(0.99))} ms, max ${ms1(r.ms.at(-1) ?? NaN)} ms; last client done after ${(r.wallMs / 1000).toFixed(2)} s; ingress connections through the delay proxy ${accepted}`,
    ...(r.failed ? [`  failures: ${show(r.failures)}`] : []),
  ].join('\n');
}

async function burstPart({ w, sec, protocol, ing, caFile }: Run): Promise<void> {
  const proxy = await startDelayProxy(parseHostPort(ing.ingress), args.rtt);
  const [port, httpPort] = (await freePorts(2)) as [number, number];
  const http = `127.0.0.1:${httpPort}`;
  // At debug every connection's outcome is logged, so every failure of the burst has its cause.
  const fwd = await forwarder(
    w,
    `burst-${protocol}-${sec}`,
    sec,
    protocol,
    proxy.address,
    caFile,
    [[port, B_URL]],
    {
      logLevel: 'debug',
      http: { listen: http },
      ...(args.burstPrefaceTimeoutMs > 0
        ? {
            limits: {
              maxConnections: 20_000,
              maxConnectionsPerPort: 20_000,
              prefaceTimeoutMs: args.burstPrefaceTimeoutMs,
            },
          }
        : {}),
    },
  );
  const outcomes = countOutcomes(fwd);
  try {
    const warm = await timedEcho(port, '127.0.0.1', ECHO_TIMEOUT_MS); // the path works (v2: a session is up)
    if (!warm.ok) throw new Error(`burst ${sec} ${protocol}: the warm-up client failed: ${warm.error}`);
    const tw = await quietSockets();
    log(
      `burst ${sec} ${protocol}: load average ${await loadAverage()}; TIME_WAIT sockets ${tw ?? 'unknown'}`,
    );
    const accepted0 = proxy.accepted();
    const pids = { forwarder: fwd.pid!, ingress: ing.child.pid! };
    const cpu0 = { forwarder: await cpuSeconds(pids.forwarder), ingress: await cpuSeconds(pids.ingress) };
    const self0 = process.cpuUsage();
    const gauges = watchGauges(http);
    const r = await bounded(`burst ${sec} ${protocol}`, burst(port, args.burst, 120_000), 300_000);
    const self = process.cpuUsage(self0);
    gauges.stop();
    const cpu = {
      forwarder: (await cpuSeconds(pids.forwarder)) - cpu0.forwarder,
      ingress: (await cpuSeconds(pids.ingress)) - cpu0.ingress,
    };
    log(burstLine(sec, protocol, r, proxy.accepted() - accepted0));
    log(
      `  CPU during the burst: forwarder ${cpu.forwarder.toFixed(2)} s, ingress ${cpu.ingress.toFixed(2)} s, this process (clients, delay proxy) ${((self.user + self.system) / 1e6).toFixed(2)} s, over ${(r.wallMs / 1000).toFixed(2)} s on 2 cores`,
    );
    log(
      `  forwarder gauges every 250 ms: dial_window max ${gauges.max('endpoint_binder_forwarder_dial_window')}, dials_waiting max ${gauges.max('endpoint_binder_forwarder_dials_waiting')} (${gauges.reads} reads)`,
    );
    log(`  dial_window read by read (250 ms apart): ${gauges.windows.join(' ')}`);
    log(
      `  forwarder failed attempts (retries included), ingress_refusals_total: ${await refusalTotals(http)}`,
    );
    log(`  the ingress's warnings over the whole run, by code: ${show(ing.warnings)}`);
    log(`  delay proxy aborts (the side that failed first, its error): ${show(proxy.aborts())}`);
    await sleep(1000); // the forwarder's last lines
    log(`  forwarder connections by outcome and code, and its warnings: ${show(outcomes)}`);
  } finally {
    await stopProcess(fwd);
    await proxy.close();
  }
}

/**
 * Reads the forwarder's gauges from /metrics every 250 ms, keeping each one's maximum and the
 * dial window's every read (how it found the ingress's handshake budget).
 */
function watchGauges(http: string): {
  max(name: string): string;
  windows: number[];
  reads: number;
  stop(): void;
} {
  const maxes = new Map<string, number>();
  const out = {
    reads: 0,
    windows: [] as number[],
    max: (n: string) => String(maxes.get(n) ?? 'unknown'),
    stop: () => clearInterval(timer),
  };
  const timer = setInterval(() => {
    void fetch(`http://${http}/metrics`)
      .then((r) => r.text())
      .then((text) => {
        out.reads++;
        for (const m of text.matchAll(/^(endpoint_binder_forwarder_(?:dial_window|dials_waiting)) (\d+)/gm)) {
          maxes.set(m[1]!, Math.max(maxes.get(m[1]!) ?? 0, Number(m[2])));
          if (m[1] === 'endpoint_binder_forwarder_dial_window') out.windows.push(Number(m[2]));
        }
      })
      .catch(() => undefined);
  }, 250);
  return out;
}

/** `endpoint_binder_forwarder_ingress_refusals_total` by code, from the forwarder's /metrics. */
async function refusalTotals(http: string): Promise<string> {
  const text = await fetch(`http://${http}/metrics`).then(
    (r) => r.text(),
    (e: unknown) => `unreadable: ${String(e)}`,
  );
  const rows = [
    ...text.matchAll(/^endpoint_binder_forwarder_ingress_refusals_total\{code="([^"]+)"\} (\d+)/gm),
  ];
  return rows.length === 0 ? 'none' : rows.map((m) => `${m[1]} ${m[2]}`).join(', ');
}

async function fdLimit(): Promise<string> {
  const text = await readFile('/proc/self/limits', 'utf8');
  return /Max open files\s+(\d+)/.exec(text)?.[1] ?? 'unknown';
}

async function main(a: Args): Promise<void> {
  log(
    `datapath-isolation bench: node ${process.version}; isolation: ${a.samples} samples ${a.gap} ms apart per phase, crowd ${a.crowd}, black-hole clients ${a.holeClients}; burst ${a.burst} at ${a.rtt} ms RTT; ingress max_handshakes_per_source ${a.ingressHandshakesPerSource || '64 (default)'}; burst prefaceTimeoutMs ${a.burstPrefaceTimeoutMs || '10000 (default)'}; open files limit ${await fdLimit()}`,
  );
  log(`load average at start: ${await loadAverage()}`);
  const up = await spawnJson(['bench/datapath-roles.ts', 'upstream'], {}, (o) =>
    typeof o['echo'] === 'number' ? o['echo'] : undefined,
  );
  const dir = await mkdtemp(join(tmpdir(), 'datapath-isolation-bench-'));
  const sim = await startKubesim({ initialNamespaces: ['default', NS] });
  const kubeconfig = join(dir, 'kubeconfig');
  await sim.writeKubeconfig(kubeconfig);
  const w: World = {
    sim,
    kubeconfig,
    dir,
    echo: up.value,
    silent: await silentUpstream(),
    hole: await blackHole(),
  };
  const secs: Sec[] = a.sec === 'both' ? ['plain', 'tls'] : [a.sec];
  const protocols: Protocol[] = a.protocol === 'both' ? ['v1', 'v2'] : [a.protocol];
  try {
    for (const sec of secs) {
      for (const protocol of protocols) {
        // A fresh ingress per transport: nothing of the previous run is still held in it.
        const ing = await startIngress(sec);
        await createTcpEndpoint(ing.api, API_KEY, A_SILENT_URL, w.silent.port);
        await createTcpEndpoint(ing.api, API_KEY, A_HOLE_URL, w.hole);
        await createTcpEndpoint(ing.api, API_KEY, B_URL, w.echo);
        const caFile = join(dir, `ingress-ca-${sec}-${protocol}.pem`);
        await writeFile(caFile, ing.ca);
        try {
          const run: Run = { w, sec, protocol, ing, caFile };
          if (a.part !== 'burst') await isolation(run);
          if (a.part !== 'isolation') await burstPart(run);
        } finally {
          await stopProcess(ing.child);
        }
      }
    }
  } finally {
    w.silent.server.close();
    await sim.stop();
  }
  log(`load average at end: ${await loadAverage()}`);
}

try {
  await main(args);
} finally {
  for (const c of children) c.kill('SIGKILL');
}
process.exit(0);
