/**
 * Rolling-restart benchmark: N clients keep connecting and transferring through the forwarder
 * replicas while the forwarder is rolled, as a Deployment with maxSurge 1 / maxUnavailable 0
 * would roll it (2 replicas, as the chart runs them): start a new replica, wait for its /readyz,
 * SIGTERM one old replica, repeat for each replica, for `--rounds` rounds.
 *
 * Each replica is the real `endpoint-binder forwarder` CLI process with its own loopback address
 * (127.0.1.x, standing in for a pod IP) and the same ports, watching the kubesim API for the
 * internal Service; the ingress is the mock's, the upstream an echo (`bench/datapath-roles.ts`).
 *
 * The Service model: there is no kube-proxy, so the clients dial through a tiny client-side
 * balancer. It polls every replica's /readyz every `--pollMs` and drops a replica after
 * `--failures` failed polls in a row, adding it back on the first 200 (the chart's readiness probe:
 * periodSeconds 2, failureThreshold 2, and the endpoints controller following it); each new
 * connection goes to the next replica it holds ready (round robin). A connection already open
 * stays on its replica, as conntrack keeps it there. The drain has to cover the gap between
 * "unready" and "no longer chosen": `--delay` (drain.delaySeconds) must exceed pollMs x failures.
 * That probe path is the slow one (`--removal probe`). By default (`--removal terminating`) the
 * model is what a real cluster does in a rollout: the EndpointSlice controller marks a pod's
 * endpoint not ready as soon as the pod is deleted (terminating), and kube-proxy stops choosing it
 * once that change reaches it, here `--propagationMs` after the SIGTERM; the probes still run.
 * Defaults are the chart's (drain 5 s + 25 s, probe period 2 s, failureThreshold 2).
 *
 * Every connection sends `--bytes` of a pattern unique to the connection, half-closes, and must
 * read exactly those bytes back and then a clean end. Reported: failed connections (refused,
 * reset, error), truncated transfers (a clean end with fewer or different bytes), the slowest
 * transfer, and the longest stall (the longest time in which no transfer completed); target 0/0.
 *
 *   npx tsx bench/rolling-restart.ts [--clients 50 --bytes 65536 --rounds 3 --replicas 2 --delay 5 --timeout 25 --pollMs 2000 --failures 2 --removal terminating --propagationMs 1000]
 *
 * Loopback only; bounded in time (every wait has a limit).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { createServer, connect, type AddressInfo } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { parseBenchArgs } from './support/args.js';
import { parseEndpointUrl } from '../src/binding/endpoint-url.js';
import { startKubesim } from '../src/kubesim/index.js';
import { createInternalService } from './support/internal-service.js';
import { children, spawnJson } from './support/spawn-json.js';

const Args = z.object({
  clients: z.coerce.number().int().min(1).max(1000).default(50),
  bytes: z.coerce
    .number()
    .int()
    .min(1)
    .max(16 * 1024 * 1024)
    .default(64 * 1024),
  rounds: z.coerce.number().int().min(1).max(20).default(3),
  replicas: z.coerce.number().int().min(1).max(8).default(2),
  delay: z.coerce.number().int().min(0).max(60).default(5),
  timeout: z.coerce.number().int().min(0).max(120).default(25),
  pollMs: z.coerce.number().int().min(20).max(5000).default(2000),
  failures: z.coerce.number().int().min(1).max(10).default(2),
  removal: z.enum(['terminating', 'probe']).default('terminating'),
  propagationMs: z.coerce.number().int().min(0).max(30_000).default(1000),
});
const args = parseBenchArgs('bench/rolling-restart.ts', Args);

const API_KEY = 'bench_api_key_0123456789';
const AUTHTOKEN = 'bench_authtoken_0123456789';
const NS = 'endpoint-binder';
const IDENTITY = { release: 'rolling', operatorNamespace: NS };
const ECHO_URL = 'tcp://echo.rolling:7000';

function log(line: string): void {
  process.stdout.write(line + '\n');
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

async function freePort(host = '127.0.0.1'): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, host, r));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/** GET /readyz with a short limit: true only for a 200. */
async function probeReady(host: string, port: number): Promise<boolean> {
  try {
    const res = await fetch(`http://${host}:${port}/readyz`, { signal: AbortSignal.timeout(1000) });
    await res.arrayBuffer();
    return res.status === 200;
  } catch {
    return false;
  }
}

interface Replica {
  name: string;
  host: string;
  httpPort: number;
  child: ChildProcess;
  exited: Promise<number | null>;
  /** The balancer's view: the last /readyz poll answered 200. */
  ready: boolean;
  polling: boolean;
  /** Consecutive failed polls: unready in the balancer's view at `--failures`, as failureThreshold. */
  misses: number;
  /** Deleted (terminating): never chosen again, whatever its probes say. */
  terminating?: boolean;
  /** When the balancer stopped choosing it, and when it was sent SIGTERM (ms since the epoch). */
  droppedAt?: number;
  termAt?: number;
}

/** The Service model: round robin over the replicas whose last /readyz poll answered 200. */
class Balancer {
  readonly replicas: Replica[] = [];
  private next = 0;
  private timer: NodeJS.Timeout | undefined;

  start(pollMs: number, failureThreshold: number): void {
    this.timer = setInterval(() => {
      for (const r of this.replicas) {
        if (r.polling) continue;
        r.polling = true;
        void probeReady(r.host, r.httpPort).then((ok) => {
          r.misses = ok ? 0 : r.misses + 1;
          if (ok && !r.terminating) r.ready = true;
          else if (r.misses >= failureThreshold && r.ready) {
            r.ready = false;
            r.droppedAt = Date.now();
          }
          r.polling = false;
        });
      }
    }, pollMs);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  pick(): Replica | undefined {
    const ready = this.replicas.filter((r) => r.ready);
    if (ready.length === 0) return undefined;
    return ready[this.next++ % ready.length];
  }

  /** The endpoints change for a deleted pod, as it reaches the balancer. */
  terminate(r: Replica): void {
    r.terminating = true;
    if (r.ready) {
      r.ready = false;
      r.droppedAt = Date.now();
    }
  }

  remove(r: Replica): void {
    const i = this.replicas.indexOf(r);
    if (i >= 0) this.replicas.splice(i, 1);
  }
}

type Outcome = 'ok' | 'failed' | 'truncated' | 'no-endpoint';

/** One transfer: send a pattern unique to `seq`, half-close, expect it back exactly, then end. */
function transfer(
  host: string,
  port: number,
  seq: number,
  bytes: number,
): Promise<{ outcome: Outcome; why?: string }> {
  const payload = Buffer.alloc(bytes);
  for (let i = 0; i < bytes; i++) payload[i] = (seq * 31 + i) & 0xff;
  return new Promise((resolve) => {
    const got: Buffer[] = [];
    let n = 0;
    let settled = false;
    const done = (outcome: Outcome, why?: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      s.destroy();
      resolve({ outcome, why });
    };
    const timer = setTimeout(() => done('failed', 'no clean end within 60 s'), 60_000);
    const s = connect({ host, port, allowHalfOpen: true });
    s.on('data', (c: Buffer) => {
      got.push(c);
      n += c.length;
    });
    s.once('end', () => {
      if (n !== bytes) return done('truncated', `clean end after ${n} of ${bytes} bytes`);
      if (!Buffer.concat(got).equals(payload)) return done('truncated', 'bytes differ');
      done('ok');
    });
    s.once('error', (err: NodeJS.ErrnoException) => done('failed', err.code ?? err.message));
    s.once('close', () => done('failed', `closed after ${n} of ${bytes} bytes without an end`));
    s.once('connect', () => {
      s.setNoDelay(true);
      s.end(payload);
    });
  });
}

interface Tally {
  ok: number;
  failed: number;
  truncated: number;
  noEndpoint: number;
  reasons: Map<string, number>;
  slowestMs: number;
  lastOk: number;
  longestStallMs: number;
}

async function main(): Promise<void> {
  log(
    `rolling-restart bench: node ${process.version}, ${args.clients} clients x ${args.bytes} bytes, ${args.replicas} replicas, ${args.rounds} rounds, drain ${args.delay} s + ${args.timeout} s, readiness poll ${args.pollMs} ms x ${args.failures}, removal ${args.removal}${args.removal === 'terminating' ? ` after ${args.propagationMs} ms` : ''}, load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  if (args.removal === 'terminating' && args.propagationMs >= args.delay * 1000)
    log(
      `warning: --propagationMs (${args.propagationMs} ms) is not below the drain delay (${args.delay} s); failures are expected`,
    );
  if (args.removal === 'probe' && args.pollMs * args.failures >= args.delay * 1000)
    log(
      `warning: --pollMs x --failures (${args.pollMs * args.failures} ms) is not below the drain delay (${args.delay} s); failures are expected`,
    );
  const up = await spawnJson(['bench/datapath-roles.ts', 'upstream'], {}, (o) =>
    typeof o['echo'] === 'number' ? o['echo'] : undefined,
  );
  const ing = await spawnJson(
    ['bench/datapath-roles.ts', 'ingress'],
    { BENCH_API_KEY: API_KEY, BENCH_AUTHTOKEN: AUTHTOKEN },
    (o) =>
      typeof o['ingress'] === 'string' ? { api: o['api'] as string, ingress: o['ingress'] } : undefined,
  );
  const created = await fetch(`${ing.value.api}/endpoints`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${API_KEY}`,
      'service-version': '2',
      'content-type': 'application/json',
    },
    body: JSON.stringify({
      url: ECHO_URL,
      bindings: ['kubernetes'],
      upstream_url: `tcp://127.0.0.1:${up.value}`,
    }),
  });
  if (created.status !== 201) throw new Error(`POST /endpoints: ${created.status} ${await created.text()}`);

  const sim = await startKubesim({ initialNamespaces: ['default', NS] });
  const echoPort = await freePort();
  const url = parseEndpointUrl(ECHO_URL);
  if (!url.ok) throw new Error(url.message);
  await createInternalService(sim, {
    identity: IDENTITY,
    name: 'ep-rolling',
    endpointId: 'ep_rolling',
    groupPorts: [{ url: url.value, forwarderPort: echoPort }],
  });
  const dir = await mkdtemp(join(tmpdir(), 'rolling-bench-'));
  const kubeconfig = join(dir, 'kubeconfig');
  await sim.writeKubeconfig(kubeconfig);
  const httpPort = await freePort();

  let generation = 0;
  const balancer = new Balancer();
  /** A new "pod": its own loopback address, the same ports; resolves once its /readyz answers 200. */
  const startReplica = async (): Promise<Replica> => {
    generation++;
    const host = `127.0.1.${generation}`;
    const name = `forwarder-${generation}`;
    const config = join(dir, `${name}.yaml`);
    await writeFile(
      config,
      JSON.stringify({
        releaseName: IDENTITY.release,
        operatorNamespace: NS,
        listenHost: host,
        ingress: { tls: false, address: ing.value.ingress },
        http: { listen: `${host}:${httpPort}` },
        drain: { delaySeconds: args.delay, timeoutSeconds: args.timeout },
        logLevel: 'warn',
      }),
    );
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'src/cli/main.ts', 'forwarder', '--config', config, '--kubeconfig', kubeconfig],
      {
        stdio: ['ignore', 'ignore', 'inherit'],
        env: { ...process.env, ENDPOINT_BINDER_AUTHTOKEN: AUTHTOKEN },
      },
    );
    children.push(child);
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    const t0 = Date.now();
    for (;;) {
      if (child.exitCode !== null)
        throw new Error(`${name} exited with ${child.exitCode} before it was ready`);
      if (await probeReady(host, httpPort)) break;
      if (Date.now() - t0 > 180_000) {
        const body = await fetch(`http://${host}:${httpPort}/readyz`, { signal: AbortSignal.timeout(3000) })
          .then((r) => r.text())
          .catch((err: unknown) => String(err));
        throw new Error(`${name}: /readyz not 200 within 180 s: ${body}`);
      }
      await sleep(100);
    }
    const r: Replica = { name, host, httpPort, child, exited, ready: false, polling: false, misses: 0 };
    balancer.replicas.push(r);
    // Ready in the balancer's view only from its own next poll, as endpoints follow the probe.
    return r;
  };

  for (let i = 0; i < args.replicas; i++) await startReplica();
  balancer.start(args.pollMs, args.failures);
  await sleep(args.pollMs * 3);

  const tally: Tally = {
    ok: 0,
    failed: 0,
    truncated: 0,
    noEndpoint: 0,
    reasons: new Map(),
    slowestMs: 0,
    lastOk: Date.now(),
    longestStallMs: 0,
  };
  let running = true;
  let seq = 0;
  const clients = Array.from({ length: args.clients }, async () => {
    while (running) {
      const r = balancer.pick();
      if (!r) {
        // No ready endpoint: a real client would be refused by the Service's virtual IP.
        tally.noEndpoint++;
        await sleep(10);
        continue;
      }
      const t0 = Date.now();
      const res = await transfer(r.host, echoPort, seq++, args.bytes);
      const now = Date.now();
      if (res.outcome === 'ok') {
        tally.ok++;
        tally.slowestMs = Math.max(tally.slowestMs, now - t0);
        tally.longestStallMs = Math.max(tally.longestStallMs, now - tally.lastOk);
        tally.lastOk = now;
      } else {
        if (res.outcome === 'failed') tally.failed++;
        else tally.truncated++;
        const key = `${res.outcome} via ${r.name}: ${res.why ?? ''}`;
        tally.reasons.set(key, (tally.reasons.get(key) ?? 0) + 1);
      }
    }
  });

  const steps: string[] = [];
  const t0 = Date.now();
  await sleep(1000); // steady state before the first roll
  for (let round = 1; round <= args.rounds; round++) {
    const old = [...balancer.replicas];
    for (const victim of old) {
      await startReplica();
      const sent = Date.now();
      victim.child.kill('SIGTERM');
      victim.termAt = sent;
      if (args.removal === 'terminating') setTimeout(() => balancer.terminate(victim), args.propagationMs);
      // Readiness must go false at once: the first probe after the signal.
      await sleep(50);
      const unready = !(await probeReady(victim.host, victim.httpPort));
      void victim.exited.then((code) => {
        steps.push(
          `round ${round}: ${victim.name} SIGTERM -> ${unready ? 'unready at once' : 'STILL READY after 50 ms'}, exited ${code} after ${((Date.now() - sent) / 1000).toFixed(1)} s; the balancer dropped it ${victim.droppedAt === undefined ? 'never' : `${((victim.droppedAt - sent) / 1000).toFixed(1)} s`} after SIGTERM (drain delay ${args.delay} s)`,
        );
        balancer.remove(victim);
      });
    }
    // The rollout is done when every old replica has finished its drain and exited.
    await Promise.race([
      Promise.all(old.map((r) => r.exited)),
      sleep((args.delay + args.timeout + 30) * 1000).then(() => {
        throw new Error(`round ${round}: an old replica did not exit within its drain plus 30 s`);
      }),
    ]);
  }
  await sleep(1000); // steady state after the last roll
  running = false;
  await Promise.all(clients);
  balancer.stop();
  const seconds = (Date.now() - t0) / 1000;

  for (const s of steps) log(s);
  log(`transfers:        ${tally.ok} ok in ${seconds.toFixed(1)} s (${(tally.ok / seconds).toFixed(0)}/s)`);
  log(`failed:           ${tally.failed} (target 0)`);
  log(`truncated:        ${tally.truncated} (target 0)`);
  log(`no ready replica: ${tally.noEndpoint} picks`);
  for (const [k, v] of tally.reasons) log(`  ${v} x ${k}`);
  log(`slowest transfer: ${tally.slowestMs} ms`);
  log(`longest stall:    ${tally.longestStallMs} ms without a completed transfer`);
  log(
    `load average at the end: ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  for (const r of balancer.replicas) r.child.kill('SIGTERM');
  await Promise.all(balancer.replicas.map((r) => r.exited));
  await sim.stop();
  if (tally.failed + tally.truncated > 0) process.exitCode = 2;
}

main()
  .catch((err: unknown) => {
    process.stderr.write(
      `rolling-restart bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    process.exitCode = 1;
  })
  .finally(() => {
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  });
