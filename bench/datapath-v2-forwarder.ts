/**
 * The `forwarder` part of bench/datapath-v2.ts (see there): the real forwarder over ingress v1
 * and v2, plain and TLS, at 0 ms and `rtt` ms between forwarder and ingress, beside direct and the
 * minimal relay, in one run.
 */
import { parseHostPort } from '../src/net/host-port.js';
import { startDelayProxy } from './datapath-delay-proxy.js';
import { createTcpEndpoint } from './support/endpoints.js';
import { forwarderWorld } from './support/forwarder-world.js';
import { startForwarderProcess } from './support/forwarder-process.js';
import {
  bounded,
  connectionRate,
  cpuSeconds,
  dial,
  freePorts,
  holdIdle,
  loadAverage,
  median,
  oneConnection,
  rssMiB,
  stream,
} from './support/load.js';
import { spawnJson } from './support/spawn-json.js';

const NS = 'endpoint-binder';
const ECHO_URL = 'tcp://echo.bench:7000';
const SINK_URL = 'tcp://sink.bench:7001';
const SOURCE_URL = 'tcp://source.bench:7002';

export interface ForwarderPartArgs {
  conns: number;
  concurrency: number;
  pairs: number;
  rtt: number;
  ttfb: number;
  mib: number;
  idle: number;
  only?: string | undefined;
  ingressWindow?: number | undefined;
  /** The forwarder's v2 stream window (`ingress.streamWindowBytes`; default its own). */
  forwarderWindow?: number | undefined;
  /** The window the forwarder's v2 streams share (`ingress.sharedWindowBytes`; default its own). */
  forwarderSharedWindow?: number | undefined;
  apiKey: string;
  authtoken: string;
}

/** One way from the client to the upstream: its echo and sink ports and the processes in it. */
interface Path {
  label: string;
  rtt: number;
  echo: number;
  sink: number;
  /** The download's port (upstream → client); direct and forwarders only. */
  source?: number;
  hopPid?: number; // the forwarder or relay
  ingressPid?: number;
  forwarder: boolean;
}

interface Tally {
  rates: number[];
  hopCpu: number;
  ingressCpu: number;
  conns: number;
  ttfbMs: number[];
  streams: number[];
  downloads: number[];
  /** CPU seconds the hop and the ingress spent on the uploads and downloads, and the MiB moved. */
  streamHopCpu: number;
  streamIngressCpu: number;
  streamMib: number;
  idleKiB?: number;
}

function log(line: string): void {
  process.stdout.write(line + '\n');
}

/** The mock API with its binding ingress (plain or TLS) as its own process; `ca` is '' for plain. */
export async function ingressRole(
  role: 'ingress' | 'ingress-tls',
  a: Pick<ForwarderPartArgs, 'apiKey' | 'authtoken' | 'ingressWindow'>,
) {
  return spawnJson(
    ['bench/datapath-roles.ts', role],
    {
      BENCH_API_KEY: a.apiKey,
      BENCH_AUTHTOKEN: a.authtoken,
      ...(a.ingressWindow ? { BENCH_H2_WINDOW: String(a.ingressWindow) } : {}),
    },
    (o) =>
      typeof o['ingress'] === 'string'
        ? { api: o['api'] as string, ingress: o['ingress'], ca: typeof o['ca'] === 'string' ? o['ca'] : '' }
        : undefined,
  );
}

async function relayRole(ingress: string, url: string, mode: 'plain' | 'tls-cached', caFile: string) {
  return spawnJson(['bench/datapath-roles.ts', 'relay', ingress, url, mode, caFile], {}, (o) =>
    typeof o['relay'] === 'number' ? o['relay'] : undefined,
  );
}

/** Sequential connections: ms from the connect to the echo of the first byte (sent at once). */
async function firstByteTimes(port: number, n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await oneConnection(port);
    out.push(performance.now() - t0);
  }
  return out;
}

/** RSS growth of `pid` per idle forwarded connection (each after one echo), KiB. */
async function idleKiB(pid: number, port: number, n: number): Promise<number> {
  await new Promise((r) => setTimeout(r, 1000));
  const before = await rssMiB(pid);
  const { held, failed } = await holdIdle(port, n);
  await new Promise((r) => setTimeout(r, 2000));
  const after = await rssMiB(pid);
  for (const s of held) s.destroy();
  await new Promise((r) => setTimeout(r, 1000));
  if (failed > 0) log(`idle ${pid}: ${failed} of ${n} connections failed before their echo`);
  return ((after - before) * 1024) / held.length;
}

async function measureRound(p: Path, t: Tally, a: ForwarderPartArgs): Promise<void> {
  const cpu = async () => [
    p.hopPid ? await cpuSeconds(p.hopPid) : 0,
    p.ingressPid ? await cpuSeconds(p.ingressPid) : 0,
  ];
  const c0 = await cpu();
  t.rates.push(await bounded(`${p.label} rate`, connectionRate(p.echo, a.conns, a.concurrency)));
  const c1 = await cpu();
  t.hopCpu += c1[0]! - c0[0]!;
  t.ingressCpu += c1[1]! - c0[1]!;
  t.conns += a.conns;
  t.ttfbMs.push(...(await bounded(`${p.label} ttfb`, firstByteTimes(p.echo, a.ttfb))));
  const c2 = await cpu();
  t.streams.push(await bounded(`${p.label} stream`, stream(p.sink, a.mib)));
  if (p.source) t.downloads.push(await bounded(`${p.label} download`, download(p.source, a.mib)));
  const c3 = await cpu();
  t.streamHopCpu += c3[0]! - c2[0]!;
  t.streamIngressCpu += c3[1]! - c2[1]!;
  t.streamMib += a.mib * (p.source ? 2 : 1);
}

/** A `mib` MiB download (upstream → client), MiB/s: from the connect to the source's clean end. */
async function download(port: number, mib: number): Promise<number> {
  const want = mib * 1024 * 1024;
  const s = await dial(port);
  const t0 = process.hrtime.bigint();
  const got = await new Promise<number>((resolve, reject) => {
    let n = 0;
    s.on('data', (c: Buffer) => (n += c.length));
    s.once('end', () => resolve(n));
    s.once('error', reject);
    s.write(`${want}\n`);
  });
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  s.destroy();
  if (got !== want) throw new Error(`downloaded ${got} bytes, the source sent ${want}`);
  return mib / seconds;
}

const pct = (xs: number[], q: number): number => {
  const s = [...xs].sort((x, y) => x - y);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
};

function row(p: Path, t: Tally): string {
  const us = (sec: number) => (t.conns ? ((sec / t.conns) * 1e6).toFixed(0) : '-');
  const perMib = (sec: number) => (t.streamMib ? ((sec / t.streamMib) * 1e3).toFixed(2) : '-');
  const rttOf = (ms: number) => (p.rtt > 0 ? ` (${(ms / p.rtt).toFixed(2)} RTT)` : '');
  return [
    p.label.padEnd(20),
    `${median(t.rates).toFixed(0)} conn/s`,
    `CPU/conn hop ${p.hopPid ? us(t.hopCpu) : '-'} µs + ingress ${p.ingressPid ? us(t.ingressCpu) : '-'} µs`,
    `ttfb p50 ${pct(t.ttfbMs, 0.5).toFixed(1)} ms${rttOf(pct(t.ttfbMs, 0.5))} p99 ${pct(t.ttfbMs, 0.99).toFixed(1)} ms${rttOf(pct(t.ttfbMs, 0.99))}`,
    `stream ${median(t.streams).toFixed(1)} MiB/s`,
    `down ${t.downloads.length ? median(t.downloads).toFixed(1) + ' MiB/s' : '-'}`,
    `CPU/MiB hop ${p.hopPid ? perMib(t.streamHopCpu) : '-'} + ingress ${p.ingressPid ? perMib(t.streamIngressCpu) : '-'} ms`,
    `idle ${t.idleKiB === undefined ? '-' : t.idleKiB.toFixed(2) + ' KiB/conn'}`,
  ].join(' | ');
}

export async function forwarderPart(a: ForwarderPartArgs): Promise<void> {
  // `--rtt 0` measures 0 ms once: twice made a second release of the same name (409 from kubesim).
  const rtts = [...new Set([0, a.rtt])];
  log(
    `datapath-v2 forwarder bench: node ${process.version}, ${a.pairs} rounds of ${a.conns} connections x${a.concurrency}, ${a.ttfb} sequential first bytes, ${a.mib} MiB upload and download per path; ${a.idle} idle; RTT ${rtts.join(' and ')} ms; windows: ingress ${a.ingressWindow ?? 'default'}, forwarder ${a.forwarderWindow ?? 'default'}, shared ${a.forwarderSharedWindow ?? 'default'}`,
  );
  log(`load average at start: ${await loadAverage()}`);
  const up = await spawnJson(['bench/datapath-roles.ts', 'upstream'], {}, (o) =>
    typeof o['echo'] === 'number'
      ? { echo: o['echo'], sink: o['sink'] as number, source: o['source'] as number }
      : undefined,
  );
  const ingresses = { plain: await ingressRole('ingress', a), tls: await ingressRole('ingress-tls', a) };
  for (const ing of Object.values(ingresses)) {
    await createTcpEndpoint(ing.value.api, a.apiKey, ECHO_URL, up.value.echo);
    await createTcpEndpoint(ing.value.api, a.apiKey, SINK_URL, up.value.sink);
    await createTcpEndpoint(ing.value.api, a.apiKey, SOURCE_URL, up.value.source);
  }
  const { dir, caFile, sim, kubeconfig } = await forwarderWorld(
    'datapath-v2-bench-',
    NS,
    ingresses.tls.value.ca,
  );
  const proxies = [];

  const paths: Path[] = [
    {
      label: 'direct',
      rtt: 0,
      echo: up.value.echo,
      sink: up.value.sink,
      source: up.value.source,
      forwarder: false,
    },
  ];
  for (const sec of ['plain', 'tls'] as const) {
    const ing = ingresses[sec].value;
    const mode = sec === 'plain' ? 'plain' : 'tls-cached';
    const [echo, sink] = [
      await relayRole(ing.ingress, ECHO_URL, mode, caFile),
      await relayRole(ing.ingress, SINK_URL, mode, caFile),
    ];
    paths.push({
      label: `relay ${sec}`,
      rtt: 0,
      echo: echo.value,
      sink: sink.value,
      hopPid: echo.child.pid!, // connections go through the echo relay
      ingressPid: ingresses[sec].child.pid!,
      forwarder: false,
    });
  }
  for (const rtt of rtts) {
    for (const sec of ['plain', 'tls'] as const) {
      let address = ingresses[sec].value.ingress;
      if (rtt > 0) {
        const proxy = await startDelayProxy(parseHostPort(address), rtt);
        proxies.push(proxy);
        address = proxy.address;
      }
      for (const protocol of ['v1', 'v2'] as const) {
        const [echo, sink, source] = (await freePorts(3)) as [number, number, number];
        const child = await startForwarderProcess({
          sim,
          kubeconfig,
          dir,
          release: `b27-${protocol}-${sec}-${rtt}`,
          namespace: NS,
          authtoken: a.authtoken,
          ingress: {
            address,
            tls: sec === 'tls',
            protocol,
            ...(sec === 'tls' ? { caFile } : {}),
            ...(a.forwarderWindow ? { streamWindowBytes: a.forwarderWindow } : {}),
            ...(a.forwarderSharedWindow !== undefined ? { sharedWindowBytes: a.forwarderSharedWindow } : {}),
          },
          routes: [
            [echo, ECHO_URL],
            [sink, SINK_URL],
            [source, SOURCE_URL],
          ],
        });
        paths.push({
          label: `fwd ${protocol} ${sec} ${rtt}ms`,
          rtt,
          echo,
          sink,
          source,
          hopPid: child.pid!,
          ingressPid: ingresses[sec].child.pid!,
          forwarder: true,
        });
      }
    }
  }

  if (a.only) {
    const only = new RegExp(a.only);
    paths.splice(0, paths.length, ...paths.filter((p) => only.test(p.label)));
  }
  const tallies = new Map<Path, Tally>(
    paths.map((p) => [
      p,
      {
        rates: [],
        hopCpu: 0,
        ingressCpu: 0,
        conns: 0,
        ttfbMs: [],
        streams: [],
        downloads: [],
        streamHopCpu: 0,
        streamIngressCpu: 0,
        streamMib: 0,
      },
    ]),
  );
  for (const p of paths) {
    await bounded(`${p.label} warm-up`, connectionRate(p.echo, 100, a.concurrency));
    await bounded(`${p.label} warm-up`, stream(p.sink, 8));
  }
  // Idle memory first, while the forwarders' heaps are small and settled (0 ms paths; the RTT
  // changes when, not what, a connection holds).
  if (a.idle > 0)
    for (const p of paths)
      if (p.forwarder && p.rtt === 0) tallies.get(p)!.idleKiB = await idleKiB(p.hopPid!, p.echo, a.idle);
  for (let round = 0; round < a.pairs; round++) {
    for (const p of paths) await measureRound(p, tallies.get(p)!, a);
    log(`round ${round + 1} done, load average ${await loadAverage()}`);
  }
  for (const p of paths) log(row(p, tallies.get(p)!));
  log(`load average at end: ${await loadAverage()}`);
  for (const p of proxies) await p.close();
  await sim.stop();
}
