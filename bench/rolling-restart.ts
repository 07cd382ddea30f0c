/**
 * Rolling-restart benchmark: N clients keep connecting and transferring through the forwarder
 * pods while the forwarder Deployment is rolled by kubesim's Deployment controller, in kubesim's
 * process-backed pods (`startKubesim({ podRunner })`, in a process of its own:
 * `bench/support/kubesim-pods.ts`, so probes and controllers do not share the clients' event
 * loop), `--rounds` times.
 *
 * The Deployment, its ConfigMap and Secret are the chart's, rendered by the real helm (dev
 * dependency) with the chart's defaults: 2 replicas, RollingUpdate maxSurge 1 / maxUnavailable 0,
 * minReadySeconds 5, readinessProbe /readyz every 2 s (failureThreshold 2), drain 5 s + 25 s,
 * terminationGracePeriodSeconds 35 (`--replicas`, `--delay` and `--timeout` set other values, through helm).
 * Each pod is the real `endpoint-binder forwarder` CLI (bench/support/forwarder-pod-runner.ts)
 * on its own loopback pod IP, watching kubesim for the internal Service; the ingress is the
 * mock's, the upstream an echo (`bench/datapath-roles.ts`). kubesim's kubelet probes the pods and
 * deletes them as a kubelet does (SIGTERM, SIGKILL after the grace period); the roll is
 * triggered as `kubectl rollout restart` does (the restartedAt annotation of the pod template).
 *
 * The Service model: there is no kube-proxy, so the clients dial through a client-side balancer
 * that follows kubesim's Pods (polled every 100 ms): a pod is chosen while it is Ready and not
 * terminating, as the EndpointSlice controller publishes it, and every change reaches the
 * balancer `--propagationMs` after kubesim shows it (kube-proxy lag). Each new connection goes
 * to the next chosen pod (round robin); a connection already open stays on its pod (conntrack).
 *
 * Every connection sends `--bytes` of a pattern unique to the connection, half-closes, and must
 * read exactly those bytes back and then a clean end. Reported: failed connections (refused,
 * reset, error), truncated transfers (a clean end with fewer or different bytes), the slowest
 * transfer, the longest stall (the longest time in which no transfer completed), and each
 * roll's duration; target 0 failed, 0 truncated.
 *
 *   npx tsx bench/rolling-restart.ts [--clients 50 --bytes 65536 --rounds 3 --propagationMs 1000 --replicas 2 --delay 5 --timeout 25]
 *
 * Loopback only; bounded in time (every wait has a limit).
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { connect, createServer } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { parseBenchArgs } from './support/args.js';
import { createTcpEndpoint } from './support/endpoints.js';
import { findRendered, renderChart } from './support/chart-render.js';
import { parseEndpointUrl } from '../src/binding/endpoint-url.js';
import type { Kubesim } from '../src/kubesim/index.js';
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
  propagationMs: z.coerce.number().int().min(0).max(30_000).default(1000),
  /** Chart value forwarder.replicas; unset keeps the chart's (2). */
  replicas: z.coerce.number().int().min(1).max(8).optional(),
  /** Chart value forwarder.drain.delaySeconds; unset keeps the chart's. */
  delay: z.coerce.number().int().min(0).max(60).optional(),
  /** Chart value forwarder.drain.timeoutSeconds; unset keeps the chart's. */
  timeout: z.coerce.number().int().min(0).max(120).optional(),
});
const args = parseBenchArgs('bench/rolling-restart.ts', Args);

const API_KEY = 'bench_api_key_0123456789';
const AUTHTOKEN = 'bench_authtoken_0123456789';
const NS = 'endpoint-binder';
const RELEASE = 'rolling';
const IDENTITY = { release: RELEASE, operatorNamespace: NS };
const ECHO_URL = 'tcp://echo.rolling:7000';
const POLL_MS = 100;

function log(line: string): void {
  process.stdout.write(line + '\n');
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

const load = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');

/** A port inside the chart's bindings.portRange (10000-19999) that is free on loopback now. */
async function freePortInRange(min: number, max: number): Promise<number> {
  for (let i = 0; i < 200; i++) {
    const port = min + Math.floor(Math.random() * (max - min + 1));
    const ok = await new Promise<boolean>((resolve) => {
      const s = createServer();
      s.once('error', () => resolve(false));
      s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
    });
    if (ok) return port;
  }
  throw new Error(`no free port in ${min}-${max}`);
}

const podSchema = z.object({
  metadata: z.looseObject({
    name: z.string(),
    deletionTimestamp: z.string().optional(),
    labels: z.record(z.string(), z.string()).optional(),
  }),
  status: z
    .looseObject({
      podIP: z.string().optional(),
      conditions: z.array(z.looseObject({ type: z.string(), status: z.string() })).optional(),
    })
    .optional(),
});
const podListSchema = z.object({ items: z.array(podSchema) });
const deploymentSchema = z.object({
  metadata: z.looseObject({ generation: z.number().int().optional() }),
  spec: z.looseObject({ replicas: z.number().int() }),
  status: z
    .looseObject({
      observedGeneration: z.number().int().optional(),
      replicas: z.number().int().optional(),
      updatedReplicas: z.number().int().optional(),
      availableReplicas: z.number().int().optional(),
    })
    .optional(),
});

/** What the bench needs of kubesim (in its own process): where it is and the admin token. */
type Api = Pick<Kubesim, 'url' | 'adminToken'>;

async function apiJson(
  sim: Api,
  method: string,
  path: string,
  body?: unknown,
  contentType?: string,
): Promise<unknown> {
  const res = await fetch(sim.url + path, {
    method,
    headers: {
      authorization: `Bearer ${sim.adminToken}`,
      'content-type': contentType ?? 'application/json',
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return JSON.parse(text) as unknown;
}

/** What the bench saw of one pod: for the per-pod lines of the report. */
interface PodSeen {
  name: string;
  ip?: string;
  terminatingAt?: number;
  unreadyAt?: number;
  droppedAt?: number;
  goneAt?: number;
  exit?: string;
  exitAt?: number;
}

/** The Service model: round robin over the pods kubesim shows Ready and not terminating, with lag. */
class Balancer {
  /** Pods the balancer chooses from (name -> IP), as of the last propagated change. */
  private readonly chosen = new Map<string, string>();
  /** The last state seen in kubesim per pod, so a change is propagated once. */
  private readonly seen = new Map<string, string | undefined>();
  private next = 0;
  private timer: NodeJS.Timeout | undefined;
  private polling = false;

  constructor(
    private readonly sim: Api,
    private readonly propagationMs: number,
    readonly pods: Map<string, PodSeen>,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.poll(), POLL_MS);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  pick(): { name: string; ip: string } | undefined {
    const all = [...this.chosen];
    if (all.length === 0) return undefined;
    const hit = all[this.next++ % all.length];
    return hit ? { name: hit[0], ip: hit[1] } : undefined;
  }

  size(): number {
    return this.chosen.size;
  }

  private async poll(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    try {
      const list = podListSchema.parse(await apiJson(this.sim, 'GET', `/api/v1/namespaces/${NS}/pods`));
      const now = Date.now();
      const present = new Set<string>();
      for (const p of list.items) {
        const name = p.metadata.name;
        present.add(name);
        const info = this.pods.get(name) ?? { name };
        this.pods.set(name, info);
        const ready = (p.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
        const terminating = p.metadata.deletionTimestamp !== undefined;
        if (p.status?.podIP) info.ip = p.status.podIP;
        if (terminating) info.terminatingAt ??= now;
        if (terminating && !ready) info.unreadyAt ??= now;
        this.observe(name, ready && !terminating && p.status?.podIP ? p.status.podIP : undefined);
      }
      for (const [name, info] of this.pods) {
        if (present.has(name) || info.goneAt !== undefined) continue;
        info.goneAt = now;
        this.observe(name, undefined);
      }
    } catch {
      // A failed poll changes nothing; the next one sees the state.
    } finally {
      this.polling = false;
    }
  }

  /** An endpoint change: applied `propagationMs` later, as kube-proxy would. */
  private observe(name: string, ip: string | undefined): void {
    if (this.seen.has(name) && this.seen.get(name) === ip) return;
    this.seen.set(name, ip);
    setTimeout(() => {
      if (this.seen.get(name) !== ip) return; // superseded
      if (ip) this.chosen.set(name, ip);
      else if (this.chosen.delete(name)) {
        const info = this.pods.get(name);
        if (info) info.droppedAt ??= Date.now();
      }
    }, this.propagationMs);
  }
}

type Outcome = 'ok' | 'failed' | 'truncated';

let rampBuf: Buffer | undefined;
/** Bytes 0, 1, ..., 255, 0, 1, ... long enough for any window of `bytes` starting below 256. */
function ramp(bytes: number): Buffer {
  if (!rampBuf || rampBuf.length < bytes + 256) {
    rampBuf = Buffer.alloc(bytes + 256);
    for (let i = 0; i < rampBuf.length; i++) rampBuf[i] = i & 0xff;
  }
  return rampBuf;
}

/** One transfer: send a pattern unique to `seq`, half-close, expect it back exactly, then end. */
function transfer(
  host: string,
  port: number,
  seq: number,
  bytes: number,
): Promise<{ outcome: Outcome; why?: string }> {
  // (seq * 31 + i) & 0xff for byte i: a window of one shared ramp, not a loop per connection.
  const start = (seq * 31) & 0xff;
  const payload = ramp(bytes).subarray(start, start + bytes);
  return new Promise((resolve) => {
    const got: Buffer[] = [];
    let n = 0;
    let settled = false;
    const done = (outcome: Outcome, why?: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      s.destroy();
      resolve(why === undefined ? { outcome } : { outcome, why });
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

async function waitFor<T>(what: string, limitMs: number, fn: () => Promise<T | undefined>): Promise<T> {
  const t0 = Date.now();
  for (;;) {
    let v: T | undefined;
    let last = '';
    try {
      v = await fn();
    } catch (err) {
      // A slow or failed API call is retried until the limit.
      last = `; last error: ${err instanceof Error ? err.message : String(err)}`;
    }
    if (v !== undefined) return v;
    if (Date.now() - t0 > limitMs)
      throw new Error(`${what}: not within ${Math.round(limitMs / 1000)} s${last}`);
    await sleep(POLL_MS);
  }
}

async function main(): Promise<void> {
  const up = await spawnJson(['bench/datapath-roles.ts', 'upstream'], {}, (o) =>
    typeof o['echo'] === 'number' ? o['echo'] : undefined,
  );
  const ing = await spawnJson(
    ['bench/datapath-roles.ts', 'ingress'],
    { BENCH_API_KEY: API_KEY, BENCH_AUTHTOKEN: AUTHTOKEN },
    (o) =>
      typeof o['ingress'] === 'string' ? { api: o['api'] as string, ingress: o['ingress'] } : undefined,
  );
  await createTcpEndpoint(ing.value.api, API_KEY, ECHO_URL, up.value);

  const rendered = renderChart(RELEASE, NS, {
    'api.baseUrl': ing.value.api,
    'credentials.apiKey': API_KEY,
    'credentials.authtoken': AUTHTOKEN,
    'bindings.ingress.address': ing.value.ingress,
    'bindings.ingress.tls': 'false',
    'forwarder.logLevel': 'warn',
    ...(args.replicas !== undefined ? { 'forwarder.replicas': String(args.replicas) } : {}),
    ...(args.delay !== undefined ? { 'forwarder.drain.delaySeconds': String(args.delay) } : {}),
    ...(args.timeout !== undefined ? { 'forwarder.drain.timeoutSeconds': String(args.timeout) } : {}),
  });
  const deploymentName = `${RELEASE}-endpoint-binder-forwarder`;
  const deployment = findRendered(rendered, 'Deployment', deploymentName);
  const configMap = findRendered(rendered, 'ConfigMap', deploymentName);
  const secret = findRendered(rendered, 'Secret', `${RELEASE}-endpoint-binder-credentials`);
  const spec = deploymentSchema
    .extend({
      spec: z.looseObject({
        replicas: z.number().int(),
        minReadySeconds: z.number().int().optional(),
        strategy: z.unknown(),
        template: z.looseObject({
          spec: z.looseObject({
            terminationGracePeriodSeconds: z.number().int(),
            containers: z.array(z.looseObject({ readinessProbe: z.unknown() })),
          }),
        }),
      }),
    })
    .parse(deployment).spec;
  const drain = z
    .object({ drain: z.object({ delaySeconds: z.number(), timeoutSeconds: z.number() }) })
    .parse(
      parseYaml(
        z.object({ data: z.record(z.string(), z.string()) }).parse(configMap).data['forwarder.yaml'] ?? '',
      ),
    ).drain;
  const grace = spec.template.spec.terminationGracePeriodSeconds;
  log(
    `rolling-restart bench (kubesim process-backed pods, chart rendered by helm): node ${process.version}, ${args.clients} clients x ${args.bytes} bytes, ${spec.replicas} replicas, ${args.rounds} rounds, strategy ${JSON.stringify(spec.strategy)}, minReadySeconds ${spec.minReadySeconds ?? 0}, readinessProbe ${JSON.stringify(spec.template.spec.containers[0]?.readinessProbe)}, drain ${drain.delaySeconds} s + ${drain.timeoutSeconds} s, terminationGracePeriodSeconds ${grace}, endpoint propagation ${args.propagationMs} ms (+ poll ${POLL_MS} ms), load average ${load()}`,
  );
  if (args.propagationMs + POLL_MS >= drain.delaySeconds * 1000)
    log(
      `warning: propagation (${args.propagationMs} + ${POLL_MS} ms) is not below the drain delay (${drain.delaySeconds} s): only the forwarder's late-arrival window (at most half of drain.timeoutSeconds) covers it`,
    );

  const dir = await mkdtemp(join(tmpdir(), 'rolling-bench-'));
  const pods = new Map<string, PodSeen>();
  const podsConfig = join(dir, 'kubesim-pods.json');
  await writeFile(
    podsConfig,
    JSON.stringify({ objects: [configMap, secret], dir, namespaces: ['default', NS] }),
  );
  // kubesim, its kubelet and the pods' lifecycle run in a process of their own (not on this busy loop).
  const kubesim = await spawnJson(
    ['bench/support/kubesim-pods.ts'],
    { BENCH_PODS_CONFIG: podsConfig },
    (o) =>
      typeof o['kubesim'] === 'string' && typeof o['token'] === 'string'
        ? { url: o['kubesim'], adminToken: o['token'] }
        : undefined,
  );
  const sim: Api = kubesim.value;
  const exitLine = z.object({
    exit: z.string(),
    code: z.number().nullable(),
    signal: z.string().nullable(),
    at: z.number(),
  });
  createInterface({ input: kubesim.child.stdout! }).on('line', (line) => {
    let parsed: z.infer<typeof exitLine>;
    try {
      parsed = exitLine.parse(JSON.parse(line));
    } catch {
      return;
    }
    const info = pods.get(parsed.exit) ?? { name: parsed.exit };
    pods.set(parsed.exit, info);
    info.exit = parsed.signal ? `killed by ${parsed.signal}` : `exited ${parsed.code}`;
    info.exitAt = parsed.at;
  });
  try {
    const echoPort = await freePortInRange(10_000, 19_999);
    const url = parseEndpointUrl(ECHO_URL);
    if (!url.ok) throw new Error(url.message);
    await createInternalService(sim, {
      identity: IDENTITY,
      name: 'ep-rolling',
      endpointId: 'ep_rolling',
      groupPorts: [{ url: url.value, forwarderPort: echoPort }],
    });
    for (const obj of [configMap, secret, deployment]) {
      const path =
        obj.kind === 'Deployment'
          ? `/apis/apps/v1/namespaces/${NS}/deployments`
          : `/api/v1/namespaces/${NS}/${obj.kind === 'Secret' ? 'secrets' : 'configmaps'}`;
      await apiJson(sim, 'POST', path, obj);
    }
    const deployPath = `/apis/apps/v1/namespaces/${NS}/deployments/${deploymentName}`;
    /** kubectl rollout status: the controller saw this generation and every pod is updated and available. */
    const rolledOut = async (generation: number) => {
      const d = deploymentSchema.parse(await apiJson(sim, 'GET', deployPath));
      const s = d.status ?? {};
      return (s.observedGeneration ?? 0) >= generation &&
        s.updatedReplicas === d.spec.replicas &&
        s.replicas === d.spec.replicas &&
        s.availableReplicas === d.spec.replicas
        ? d
        : undefined;
    };
    const t0 = Date.now();
    await waitFor('the first rollout', 180_000, () => rolledOut(1));
    log(
      `first rollout (pods started, Ready, minReadySeconds passed): ${((Date.now() - t0) / 1000).toFixed(1)} s`,
    );

    const balancer = new Balancer(sim, args.propagationMs, pods);
    balancer.start();
    await waitFor('the balancer to choose every pod', 30_000, async () =>
      balancer.size() === spec.replicas ? true : undefined,
    );

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
        const p = balancer.pick();
        if (!p) {
          // No ready endpoint: a real client would be refused by the Service's virtual IP.
          tally.noEndpoint++;
          await sleep(10);
          continue;
        }
        const start = Date.now();
        const res = await transfer(p.ip, echoPort, seq++, args.bytes);
        const now = Date.now();
        if (res.outcome === 'ok') {
          tally.ok++;
          tally.slowestMs = Math.max(tally.slowestMs, now - start);
          tally.longestStallMs = Math.max(tally.longestStallMs, now - tally.lastOk);
          tally.lastOk = now;
        } else {
          if (res.outcome === 'failed') tally.failed++;
          else tally.truncated++;
          const key = `${res.outcome} via ${p.name}: ${res.why ?? ''}`;
          tally.reasons.set(key, (tally.reasons.get(key) ?? 0) + 1);
        }
      }
    });

    const rolls: string[] = [];
    const tLoad = Date.now();
    await sleep(1000); // steady state before the first roll
    for (let round = 1; round <= args.rounds; round++) {
      const before = new Set([...pods.values()].filter((p) => p.goneAt === undefined).map((p) => p.name));
      const sent = Date.now();
      // What `kubectl rollout restart` sends.
      const patched = deploymentSchema.parse(
        await apiJson(
          sim,
          'PATCH',
          deployPath,
          {
            spec: {
              template: {
                metadata: { annotations: { 'kubectl.kubernetes.io/restartedAt': new Date().toISOString() } },
              },
            },
          },
          'application/strategic-merge-patch+json',
        ),
      );
      const limit = (grace + 60) * 1000 * spec.replicas + 120_000;
      await waitFor(`round ${round}: rollout`, limit, () => rolledOut(patched.metadata.generation ?? 1));
      const rolledAt = Date.now();
      await waitFor(`round ${round}: the old pods gone`, limit, async () =>
        [...before].every((n) => pods.get(n)?.goneAt !== undefined) ? true : undefined,
      );
      const goneAt = Date.now();
      rolls.push(
        `round ${round}: rollout complete (kubectl rollout status) ${((rolledAt - sent) / 1000).toFixed(1)} s after the restart, old pods gone after ${((goneAt - sent) / 1000).toFixed(1)} s`,
      );
      for (const name of before) {
        const p = pods.get(name);
        if (!p?.terminatingAt) continue;
        const at = (t: number | undefined) =>
          t === undefined ? 'never' : `${((t - p.terminatingAt!) / 1000).toFixed(1)} s`;
        rolls.push(
          `  ${name} (${p.ip ?? '?'}): terminating -> unready in kubesim ${at(p.unreadyAt)}, dropped by the balancer ${at(p.droppedAt)}, process ${p.exit ?? 'still running'} ${at(p.exitAt)}, object gone ${at(p.goneAt)}`,
        );
      }
    }
    await sleep(1000); // steady state after the last roll
    running = false;
    await Promise.all(clients);
    balancer.stop();
    const seconds = (Date.now() - tLoad) / 1000;

    for (const r of rolls) log(r);
    log(`transfers:        ${tally.ok} ok in ${seconds.toFixed(1)} s (${(tally.ok / seconds).toFixed(0)}/s)`);
    log(`failed:           ${tally.failed} (target 0)`);
    log(`truncated:        ${tally.truncated} (target 0)`);
    log(`no ready pod:     ${tally.noEndpoint} picks`);
    for (const [k, v] of tally.reasons) log(`  ${v} x ${k}`);
    log(`slowest transfer: ${tally.slowestMs} ms`);
    log(`longest stall:    ${tally.longestStallMs} ms without a completed transfer`);
    log(`load average at the end: ${load()}`);
    if (tally.failed + tally.truncated > 0) process.exitCode = 2;
  } finally {
    // kubesim ends every pod process (SIGTERM, SIGKILL after 2 s) before it exits.
    const exited = new Promise<void>((r) => kubesim.child.once('exit', () => r()));
    kubesim.child.kill('SIGTERM');
    await Promise.race([exited, sleep(10_000)]);
  }
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
