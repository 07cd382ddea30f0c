/**
 * Data-path benchmark: client → forwarder → binding ingress → upstream, each a separate process on
 * loopback (the forwarder is the real `endpoint-binder forwarder` CLI, the ingress the mock's).
 * Every figure is a ratio against a baseline measured in the same run:
 *
 *   stream      1 GiB one way to a sink: through the path vs direct, and vs a two-hop socat chain
 *   connections new connections per second (connect, 1-byte echo, close): path vs direct
 *   latency     p99 of a 1-byte echo on one connection: path minus direct
 *   idle RSS    the forwarder's RSS growth with 5,000 idle connections open through it
 *
 *   npx tsx bench/datapath.ts [--mib 1024 --conns 6000 --concurrency 32 --pings 5000 --idle 5000 --burst 2000 --tlsConns 2000 --pairs 3]
 *
 * Loopback only; bounded in bytes, counts and time.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { parseBenchArgs } from './support/args.js';
import { createTcpEndpoint } from './support/endpoints.js';
import { startKubesim } from '../src/kubesim/index.js';
import { startForwarderProcess } from './support/forwarder-process.js';
import { children, spawnJson } from './support/spawn-json.js';
import {
  bounded,
  connectionRate,
  cpuSeconds,
  dial,
  freePort,
  freePorts,
  median,
  oneConnection,
  rssMiB,
  stream,
} from './support/load.js';

const Args = z.object({
  mib: z.coerce.number().int().min(1).max(4096).default(1024),
  conns: z.coerce.number().int().min(100).max(20_000).default(6000),
  concurrency: z.coerce.number().int().min(1).max(256).default(32),
  pings: z.coerce.number().int().min(100).max(100_000).default(5000),
  idle: z.coerce.number().int().min(0).max(8000).default(5000),
  burst: z.coerce.number().int().min(1).max(10_000).default(2000),
  tlsConns: z.coerce.number().int().min(100).max(100_000).default(2000),
  pairs: z.coerce.number().int().min(1).max(20).default(3),
});
const args = parseBenchArgs('bench/datapath.ts', Args);

const API_KEY = 'bench_api_key_0123456789';
const AUTHTOKEN = 'bench_authtoken_0123456789';
const NS = 'endpoint-binder';
const IDENTITY = { release: 'bench', operatorNamespace: NS };
const ECHO_URL = 'tcp://echo.bench:7000';
const SINK_URL = 'tcp://sink.bench:7001';

function log(line: string): void {
  process.stdout.write(line + '\n');
}

/** `n` connections opened at once, each one echo: how many were served, and connect+echo times in ms. */
async function burst(
  port: number,
  n: number,
): Promise<{ ok: number; failed: number; p50: number; p99: number; max: number }> {
  const times: number[] = [];
  let failed = 0;
  await Promise.all(
    Array.from({ length: n }, async () => {
      const t0 = process.hrtime.bigint();
      try {
        await oneConnection(port, 60_000);
        times.push(Number(process.hrtime.bigint() - t0) / 1e6);
      } catch {
        failed++;
      }
    }),
  );
  times.sort((a, b) => a - b);
  return { ok: times.length, failed, p50: pct(times, 50), p99: pct(times, 99), max: times.at(-1) ?? NaN };
}

function burstLine(label: string, b: Awaited<ReturnType<typeof burst>>, n: number): string {
  return `${label}${b.ok}/${n} served, ${b.failed} failed; connect+echo p50 ${fmt(b.p50, 0)} ms  p99 ${fmt(b.p99, 0)} ms  max ${fmt(b.max, 0)} ms`;
}

/** Sequential 1-byte echoes on one connection: latencies in ms, sorted. */
async function pingLatencies(port: number, n: number): Promise<number[]> {
  const s = await dial(port);
  const out: number[] = [];
  let waiter: (() => void) | undefined;
  let failed: Error | undefined;
  let onFail: ((err: Error) => void) | undefined;
  s.on('data', () => waiter?.());
  const fail = (err: Error) => {
    failed ??= err;
    onFail?.(failed);
  };
  s.once('error', fail);
  s.once('end', () => fail(new Error('ping connection ended')));
  s.once('close', () => fail(new Error('ping connection closed')));
  for (let i = 0; i < n + n / 10; i++) {
    const t0 = process.hrtime.bigint();
    await new Promise<void>((resolve, reject) => {
      if (failed) return reject(failed);
      waiter = resolve;
      onFail = reject;
      s.write('x');
    });
    if (i >= n / 10) out.push(Number(process.hrtime.bigint() - t0) / 1e6); // the first 10 % warm up
  }
  s.destroy();
  return out.sort((a, b) => a - b);
}

const pct = (sorted: number[], p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

function haveSocat(): boolean {
  return spawnSync('socat', ['-V'], { stdio: 'ignore' }).status === 0;
}

async function socatChain(target: number): Promise<number> {
  const [p1, p2] = (await freePorts(2)) as [number, number];
  for (const [listen, to] of [
    [p2, target],
    [p1, p2],
  ] as const) {
    children.push(
      spawn(
        'socat',
        ['-t', '5', `TCP-LISTEN:${listen},bind=127.0.0.1,reuseaddr,fork,backlog=1024`, `TCP:127.0.0.1:${to}`],
        {
          stdio: 'ignore',
        },
      ),
    );
  }
  for (const port of [p1, p2]) {
    for (let i = 0; ; i++) {
      try {
        const s = await dial(port);
        s.destroy();
        break;
      } catch (err) {
        if (i > 100) throw err;
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  }
  return p1;
}

function fmt(n: number, digits = 1): string {
  return n.toFixed(digits);
}

async function main(): Promise<void> {
  log(
    `datapath bench: node ${process.version}, ${args.mib} MiB stream, ${args.conns} connections x${args.concurrency}, ${args.pings} pings, ${args.idle} idle`,
  );
  const up = await spawnJson(['bench/datapath-roles.ts', 'upstream'], {}, (o) =>
    typeof o['echo'] === 'number' ? { echo: o['echo'], sink: o['sink'] as number } : undefined,
  );
  const ing = await spawnJson(
    ['bench/datapath-roles.ts', 'ingress'],
    { BENCH_API_KEY: API_KEY, BENCH_AUTHTOKEN: AUTHTOKEN },
    (o) =>
      typeof o['ingress'] === 'string' ? { api: o['api'] as string, ingress: o['ingress'] } : undefined,
  );
  for (const [url, port] of [
    [ECHO_URL, up.value.echo],
    [SINK_URL, up.value.sink],
  ] as const) {
    await createTcpEndpoint(ing.value.api, API_KEY, url, port);
  }

  const sim = await startKubesim({ initialNamespaces: ['default', NS] });
  const [echoPort, sinkPort] = (await freePorts(2)) as [number, number];
  const dir = await mkdtemp(join(tmpdir(), 'datapath-bench-'));
  const kubeconfig = join(dir, 'kubeconfig');
  await sim.writeKubeconfig(kubeconfig);
  // BENCH_CPU_PROF=<dir>: the plain forwarder writes a CPU profile there when it exits.
  const prof = process.env['BENCH_CPU_PROF'];
  const fwd = {
    child: await startForwarderProcess({
      sim,
      kubeconfig,
      dir,
      release: IDENTITY.release,
      namespace: NS,
      authtoken: AUTHTOKEN,
      ingress: { tls: false, address: ing.value.ingress },
      routes: [
        [echoPort, ECHO_URL],
        [sinkPort, SINK_URL],
      ],
      ...(prof ? { nodeFlags: ['--cpu-prof', `--cpu-prof-dir=${prof}`] } : {}),
    }),
  };
  const fwdPid = fwd.child.pid!;

  // Warm up both paths (JIT, connection setup code) with small amounts.
  await bounded('stream', stream(sinkPort, 16));
  await bounded('stream', stream(up.value.sink, 16));
  await bounded('connectionRate', connectionRate(echoPort, 500, args.concurrency));
  await bounded('connectionRate', connectionRate(up.value.echo, 500, args.concurrency));

  // 1. Forwarder RSS with idle connections: first, while the heap is small and settled.
  if (args.idle > 0) {
    await new Promise((r) => setTimeout(r, 1000));
    const before = await rssMiB(fwdPid);
    const idle: Socket[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: 100 }, async () => {
        while (next < args.idle) {
          next++;
          const s = await dial(echoPort);
          await new Promise<void>((resolve, reject) => {
            s.once('data', () => resolve());
            s.once('error', reject);
            s.write('x');
          });
          idle.push(s);
        }
      }),
    );
    await new Promise((r) => setTimeout(r, 2000));
    const after = await rssMiB(fwdPid);
    log(
      `forwarder RSS:             ${fmt(before)} MiB -> ${fmt(after)} MiB with ${idle.length} idle connections: +${fmt(after - before)} MiB (${fmt(((after - before) * 1024) / idle.length, 1)} KiB each; target <= 100 MB)`,
    );
    for (const s of idle) s.destroy();
  }

  // 2. Stream.
  const direct = await bounded('stream', stream(up.value.sink, args.mib));
  const scpu0 = await Promise.all([fwdPid, ing.child.pid!].map(cpuSeconds));
  const path = await bounded('stream', stream(sinkPort, args.mib));
  const scpu1 = await Promise.all([fwdPid, ing.child.pid!].map(cpuSeconds));
  const perMiB = (i: number) => fmt(((scpu1[i]! - scpu0[i]!) / args.mib) * 1e3, 2);
  log(`stream direct:             ${fmt(direct)} MiB/s`);
  log(
    `stream forwarder+ingress:  ${fmt(path)} MiB/s  ratio ${fmt(path / direct, 2)}x direct (target >= 0.5x)`,
  );
  log(`  CPU per MiB:             forwarder ${perMiB(0)} ms, ingress ${perMiB(1)} ms`);
  if (haveSocat()) {
    const chain = await socatChain(up.value.sink);
    await bounded('stream', stream(chain, 64));
    const viaSocat = await bounded('stream', stream(chain, args.mib));
    log(
      `stream socat two-hop:      ${fmt(viaSocat)} MiB/s  forwarder+ingress is ${fmt(path / viaSocat, 2)}x socat`,
    );
  } else {
    log('stream socat two-hop:      SKIPPED (socat is not installed; apt-get install -y socat)');
  }

  // 3. New connections per second.
  const rateDirect = await bounded(
    'connectionRate',
    connectionRate(up.value.echo, args.conns, args.concurrency),
  );
  const cpu0 = await Promise.all([fwdPid, ing.child.pid!].map(cpuSeconds));
  const ratePath = await bounded('connectionRate', connectionRate(echoPort, args.conns, args.concurrency));
  const cpu1 = await Promise.all([fwdPid, ing.child.pid!].map(cpuSeconds));
  const perConn = (i: number) => fmt(((cpu1[i]! - cpu0[i]!) / args.conns) * 1e6, 0);
  log(`connections direct:        ${fmt(rateDirect, 0)}/s`);
  log(
    `connections path:          ${fmt(ratePath, 0)}/s  ratio ${fmt(ratePath / rateDirect, 2)}x direct (target >= 2000/s)`,
  );
  log(`  CPU per connection:      forwarder ${perConn(0)} us, ingress ${perConn(1)} us`);

  // 4. 1-byte echo latency.
  const latDirect = await bounded('pingLatencies', pingLatencies(up.value.echo, args.pings));
  const latPath = await bounded('pingLatencies', pingLatencies(echoPort, args.pings));
  log(
    `latency direct:            p50 ${fmt(pct(latDirect, 50), 3)} ms  p99 ${fmt(pct(latDirect, 99), 3)} ms`,
  );
  log(`latency path:              p50 ${fmt(pct(latPath, 50), 3)} ms  p99 ${fmt(pct(latPath, 99), 3)} ms`);
  log(`latency added p99:         ${fmt(pct(latPath, 99) - pct(latDirect, 99), 3)} ms (target <= 1 ms)`);

  // 5. The ceiling for a Node process: a minimal relay doing the same hop (accept, dial the same
  // ingress with the project's dialer, pipe), against the forwarder.
  const relayEcho = await spawnJson(
    ['bench/datapath-roles.ts', 'relay', ing.value.ingress, ECHO_URL, 'plain'],
    {},
    (o) => (typeof o['relay'] === 'number' ? o['relay'] : undefined),
  );
  const relaySink = await spawnJson(
    ['bench/datapath-roles.ts', 'relay', ing.value.ingress, SINK_URL, 'plain'],
    {},
    (o) => (typeof o['relay'] === 'number' ? o['relay'] : undefined),
  );
  // Relay and forwarder alternate, `--pairs` times each, so a load swing on a shared machine hits
  // both sides alike; the medians and every pair's ratio are printed.
  await bounded('connectionRate', connectionRate(relayEcho.value, 500, args.concurrency));
  await bounded('connectionRate', connectionRate(echoPort, 500, args.concurrency));
  const perPair = Math.max(100, Math.floor(args.conns / args.pairs));
  const mibPerPair = Math.max(1, Math.floor(args.mib / args.pairs));
  const rates = { relay: [] as number[], fwd: [] as number[] };
  const streams = { relay: [] as number[], fwd: [] as number[] };
  // CPU seconds each spent: less sensitive to other load than a rate.
  const connCpu = { relay: 0, fwd: 0 };
  const streamCpu = { relay: 0, fwd: 0 };
  for (let i = 0; i < args.pairs; i++) {
    let c0 = await cpuSeconds(relayEcho.child.pid!);
    rates.relay.push(
      await bounded('connectionRate', connectionRate(relayEcho.value, perPair, args.concurrency)),
    );
    connCpu.relay += (await cpuSeconds(relayEcho.child.pid!)) - c0;
    c0 = await cpuSeconds(fwdPid);
    rates.fwd.push(await bounded('connectionRate', connectionRate(echoPort, perPair, args.concurrency)));
    connCpu.fwd += (await cpuSeconds(fwdPid)) - c0;
    c0 = await cpuSeconds(relaySink.child.pid!);
    streams.relay.push(await bounded('stream', stream(relaySink.value, mibPerPair)));
    streamCpu.relay += (await cpuSeconds(relaySink.child.pid!)) - c0;
    c0 = await cpuSeconds(fwdPid);
    streams.fwd.push(await bounded('stream', stream(sinkPort, mibPerPair)));
    streamCpu.fwd += (await cpuSeconds(fwdPid)) - c0;
  }
  const pairRatios = (a: { relay: number[]; fwd: number[] }) =>
    a.fwd.map((f, i) => fmt(f / a.relay[i]!, 2)).join(' ');
  const rateRelay = median(rates.relay);
  const rateFwd2 = median(rates.fwd);
  const streamRelay = median(streams.relay);
  const streamFwd2 = median(streams.fwd);
  log(
    `connections relay->ingress: ${fmt(rateRelay, 0)}/s; forwarder->ingress ${fmt(rateFwd2, 0)}/s  ratio ${fmt(rateFwd2 / rateRelay, 2)}x relay (target >= 0.9x; medians of ${args.pairs} alternating pairs of ${perPair}, pair ratios ${pairRatios(rates)})`,
  );
  log(
    `stream relay->ingress:     ${fmt(streamRelay, 1)} MiB/s; forwarder->ingress ${fmt(streamFwd2, 1)} MiB/s  ratio ${fmt(streamFwd2 / streamRelay, 2)}x relay (target >= 0.9x; medians of ${args.pairs} pairs of ${mibPerPair} MiB, pair ratios ${pairRatios(streams)})`,
  );

  const cpuPerConn = (sec: number) => (sec / (perPair * args.pairs)) * 1e6;
  log(
    `  CPU per connection:      relay ${fmt(cpuPerConn(connCpu.relay), 0)} us, forwarder ${fmt(cpuPerConn(connCpu.fwd), 0)} us  ratio ${fmt(connCpu.relay / connCpu.fwd, 2)}x (relay / forwarder)`,
  );
  const cpuPerMib = (sec: number) => (sec / (mibPerPair * args.pairs)) * 1e3;
  log(
    `  CPU per MiB streamed:    relay ${fmt(cpuPerMib(streamCpu.relay), 2)} ms, forwarder ${fmt(cpuPerMib(streamCpu.fwd), 2)} ms  ratio ${fmt(streamCpu.relay / streamCpu.fwd, 2)}x (relay / forwarder)`,
  );

  // 6. A burst of connections opened at once (plain).
  const plainBurst = await bounded('burst', burst(echoPort, args.burst));
  log(burstLine(`burst plain x${args.burst}:        `, plainBurst, args.burst));

  fwd.child.kill('SIGTERM');
  await new Promise((r) => fwd.child.once('exit', r));

  // 7. TLS: the dialer's connection rate with a SecureContext per connection and no resumption
  // (before #15) and with one cached context and session resumption (after), both through the
  // minimal relay; then the forwarder over TLS, and a TLS burst.
  const ingTls = await spawnJson(
    ['bench/datapath-roles.ts', 'ingress-tls'],
    { BENCH_API_KEY: API_KEY, BENCH_AUTHTOKEN: AUTHTOKEN },
    (o) =>
      typeof o['ingress'] === 'string'
        ? { api: o['api'] as string, ingress: o['ingress'], ca: String(o['ca']) }
        : undefined,
  );
  await createTcpEndpoint(ingTls.value.api, API_KEY, ECHO_URL, up.value.echo);
  const caFile = join(dir, 'ingress-ca.pem');
  await writeFile(caFile, ingTls.value.ca);
  // Both relays run at once and are measured alternately, `--pairs` times each, for the same reason.
  const tlsRelays = {} as Record<'tls-fresh' | 'tls-cached', { value: number; child: ChildProcess }>;
  for (const mode of ['tls-fresh', 'tls-cached'] as const) {
    tlsRelays[mode] = await spawnJson(
      ['bench/datapath-roles.ts', 'relay', ingTls.value.ingress, ECHO_URL, mode, caFile],
      {},
      (o) => (typeof o['relay'] === 'number' ? o['relay'] : undefined),
    );
    await bounded('connectionRate', connectionRate(tlsRelays[mode].value, 200, args.concurrency));
  }
  const tlsPerPair = Math.max(100, Math.floor(args.tlsConns / args.pairs));
  const tlsRuns = { 'tls-fresh': [] as number[], 'tls-cached': [] as number[] };
  const tlsCpu = { 'tls-fresh': 0, 'tls-cached': 0 };
  for (let i = 0; i < args.pairs; i++)
    for (const mode of ['tls-fresh', 'tls-cached'] as const) {
      const c0 = await cpuSeconds(tlsRelays[mode].child.pid!);
      tlsRuns[mode].push(
        await bounded('connectionRate', connectionRate(tlsRelays[mode].value, tlsPerPair, args.concurrency)),
      );
      tlsCpu[mode] += (await cpuSeconds(tlsRelays[mode].child.pid!)) - c0;
    }
  for (const r of Object.values(tlsRelays)) r.child.kill('SIGKILL');
  const tlsRates = { 'tls-fresh': median(tlsRuns['tls-fresh']), 'tls-cached': median(tlsRuns['tls-cached']) };
  const tlsPairRatios = tlsRuns['tls-cached'].map((c, i) => fmt(c / tlsRuns['tls-fresh'][i]!, 2)).join(' ');
  log(
    `TLS connections (relay):   context per connection ${fmt(tlsRates['tls-fresh'], 0)}/s; cached context + resumption ${fmt(tlsRates['tls-cached'], 0)}/s  ratio ${fmt(tlsRates['tls-cached'] / tlsRates['tls-fresh'], 2)}x (target >= 2x; medians of ${args.pairs} alternating pairs of ${tlsPerPair}, pair ratios ${tlsPairRatios})`,
  );
  const tlsCpuPerConn = (mode: 'tls-fresh' | 'tls-cached') =>
    fmt((tlsCpu[mode] / (tlsPerPair * args.pairs)) * 1e6, 0);
  log(
    `  relay CPU per TLS connection: context per connection ${tlsCpuPerConn('tls-fresh')} us; cached + resumption ${tlsCpuPerConn('tls-cached')} us  ratio ${fmt(tlsCpu['tls-fresh'] / tlsCpu['tls-cached'], 2)}x`,
  );
  const tlsPort = await freePort();
  const fwdTls = {
    child: await startForwarderProcess({
      sim,
      kubeconfig,
      dir,
      release: 'bench-tls',
      namespace: NS,
      authtoken: AUTHTOKEN,
      ingress: { tls: true, address: ingTls.value.ingress, caFile },
      routes: [[tlsPort, ECHO_URL]],
    }),
  };
  await bounded('connectionRate', connectionRate(tlsPort, 200, args.concurrency));
  const cpuT0 = await cpuSeconds(fwdTls.child.pid!);
  const rateTlsFwd = await bounded(
    'connectionRate',
    connectionRate(tlsPort, args.tlsConns, args.concurrency),
  );
  const cpuT1 = await cpuSeconds(fwdTls.child.pid!);
  log(
    `TLS connections forwarder: ${fmt(rateTlsFwd, 0)}/s  CPU ${fmt(((cpuT1 - cpuT0) / args.tlsConns) * 1e6, 0)} us per connection`,
  );
  const tlsBurst = await bounded('burst', burst(tlsPort, args.burst));
  log(burstLine(`burst TLS x${args.burst}:          `, tlsBurst, args.burst));
  fwdTls.child.kill('SIGTERM');
  await new Promise((r) => fwdTls.child.once('exit', r));
  // The TLS target compares the forwarder before #15 with the forwarder now: that needs an
  // older checkout, so it is a command of its own.
  log(
    'TLS forwarder before vs now: not run here; npx tsx bench/datapath-tls-before.ts --before <checkout of 53265ec>',
  );
  await sim.stop();
}

main()
  .catch((err: unknown) => {
    process.stderr.write(
      `datapath bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    process.exitCode = 1;
  })
  .finally(() => {
    for (const c of children) c.kill('SIGKILL');
  });
