/**
 * Controller benchmark, against the mock API and kubesim on loopback (in a separate process, so
 * this process measures the controller alone). Three figures:
 *
 *  1. projection latency: the API's 201 for an endpoint to both of its Services readable in
 *     kubesim, endpoints created one after another; through notifications, then polling only;
 *     deletion latency beside it: the API's answer to `DELETE /endpoints/{id}` to both Services
 *     gone from kubesim's watch, the same endpoints deleted one after another (notifications);
 *  2. convergence of N endpoints over 100 namespaces from an empty cluster, as a ratio to creating
 *     the same Services directly against kubesim with the same concurrency, in the same run (the
 *     direct run before and after the controller's, the ratio to their mean);
 *  3. a full resync of the largest N unchanged: Kubernetes writes, CPU time, controller RSS;
 *     then, at that size, `/status` over HTTP (20 GETs, to the last byte) and a restart (a new
 *     leader over the converged cluster: Service writes seen by a bench-side watch, time to ready).
 *
 *   npm run bench:controller [-- --latency 200 --sizes 1000,5000,10000 --concurrency 16 --target real]
 *   BENCH_CPU_PROF=<dir> also writes <dir>/convergence-<n>.cpuprofile and <dir>/resync.cpuprofile
 *   (those windows only). BENCH_LOG=<file> writes the controller's log there (BENCH_LOG_LEVEL,
 *   default info; debug shows each pass's name reads), which slows the controller a little.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { parseBenchArgs } from './support/args.js';
import { ManagementClient } from '../src/api/client/index.js';
import { ENDPOINT_ID_ANNOTATION, MANAGED_BY_LABEL } from '../src/binding/identity.js';
import { resolveControllerConfig } from '../src/controller/config.js';
import { startController, type Controller } from '../src/controller/controller.js';
import {
  KubeClient,
  collectionPath,
  createCache,
  kinds,
  kubeConfigFrom,
  type Service,
} from '../src/kube/index.js';
import { pino } from 'pino';
import { createLogger, silentLogger } from '../src/log/logger.js';

const Args = z.object({
  latency: z.coerce.number().int().min(1).max(2_000).default(200),
  sizes: z
    .string()
    .default('1000,5000,10000')
    .transform((s) => s.split(',').map((x) => Number(x)))
    .pipe(z.array(z.number().int().min(1).max(20_000))),
  concurrency: z.coerce.number().int().min(1).max(128).default(16),
  /** kubesim, or a real kube-apiserver (`npm run control-plane:build` first). */
  target: z.enum(['kubesim', 'real']).default('kubesim'),
});
const args = parseBenchArgs('bench/controller.ts', Args);

const EnvInfo = z.object({
  apiUrl: z.string(),
  adminUrl: z.string(),
  apiKey: z.string(),
  kubeconfig: z.string(),
});

interface Env {
  info: z.infer<typeof EnvInfo>;
  child: ChildProcess;
  client: ManagementClient;
  stop(): Promise<void>;
}

async function startEnv(): Promise<Env> {
  const kubeconfig = join(mkdtempSync(join(tmpdir(), 'eb-bench-')), 'kubeconfig');
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'bench/support/env-server.ts', kubeconfig, '100', args.target],
    {
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  );
  const info = await new Promise<z.infer<typeof EnvInfo>>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      const line = out.split('\n')[0];
      if (out.includes('\n') && line) resolve(EnvInfo.parse(JSON.parse(line)));
    });
    child.on('exit', (code) => reject(new Error(`env server exited ${code}`)));
  });
  const client = new ManagementClient({ baseUrl: info.apiUrl, apiKey: info.apiKey, retry: { retries: 5 } });
  return {
    info,
    child,
    client,
    async stop() {
      await client.close();
      const exited = new Promise((r) => child.once('exit', r));
      child.stdin.end();
      await exited;
    },
  };
}

async function controllerFor(
  env: Env,
  opts: { notifications?: boolean; concurrency: number },
): Promise<Controller> {
  const r = resolveControllerConfig(
    {
      api: { baseUrl: env.info.apiUrl },
      operatorNamespace: 'endpoint-binder',
      http: { listen: '127.0.0.1:0' },
      writeConcurrency: opts.concurrency,
      resyncIntervalSeconds: 3600,
    },
    { ENDPOINT_BINDER_API_KEY: env.info.apiKey },
  );
  if (!r.ok) throw new Error(r.errors.join('\n'));
  return startController({
    config: r.config,
    kubeConfig: kubeConfigFrom({ kubeconfigPath: env.info.kubeconfig }),
    logger: process.env['BENCH_LOG']
      ? createLogger({
          level: process.env['BENCH_LOG_LEVEL'] ?? 'info',
          destination: pino.destination(process.env['BENCH_LOG']),
        })
      : silentLogger(),
    poll: { initialMs: 200, maxMs: 200 },
    ...(opts.notifications === false ? { notifications: false } : {}),
  });
}

/** A bench-side watch of the Services carrying the managed-by label (not started). */
function ownedServicesCache(env: Env) {
  return createCache<Service>({
    kubeConfig: kubeConfigFrom({ kubeconfigPath: env.info.kubeconfig }),
    path: collectionPath(kinds.service),
    labelSelector: `${MANAGED_BY_LABEL}=endpoint-binder`,
    schema: kinds.service.schema,
    logger: silentLogger(),
  });
}

/** Owned Services as a bench-side watch sees them, with the time each endpoint got both. */
function servicesWatch(env: Env): {
  count: () => number;
  bothAt: Map<string, number>;
  /** When both Services of an endpoint had been deleted. */
  goneAt: Map<string, number>;
  stop: () => Promise<void>;
  synced: Promise<void>;
} {
  const cache = ownedServicesCache(env);
  const internalAt = new Map<string, number>();
  const aliasOf = new Map<string, string>(); // alias key -> endpoint ids joined
  const bothAt = new Map<string, number>();
  let n = 0;
  cache.on('add', (s) => {
    n++;
    const now = performance.now();
    const id = s.metadata.annotations?.[ENDPOINT_ID_ANNOTATION];
    if (id) {
      internalAt.set(id, now);
      if (aliasOf.has(id)) bothAt.set(id, now);
    } else {
      const ids = JSON.parse(s.metadata.annotations?.['endpoint-binder.io/endpoint-ids'] ?? '[]') as string[];
      for (const eid of ids) {
        aliasOf.set(eid, s.metadata.name);
        if (internalAt.has(eid) && !bothAt.has(eid)) bothAt.set(eid, now);
      }
    }
  });
  const internalGone = new Set<string>();
  const aliasGone = new Set<string>();
  const goneAt = new Map<string, number>();
  cache.on('delete', (s) => {
    n--;
    const now = performance.now();
    const id = s.metadata.annotations?.[ENDPOINT_ID_ANNOTATION];
    const ids = id
      ? [id]
      : (JSON.parse(s.metadata.annotations?.['endpoint-binder.io/endpoint-ids'] ?? '[]') as string[]);
    for (const eid of ids) {
      (id ? internalGone : aliasGone).add(eid);
      if (internalGone.has(eid) && aliasGone.has(eid) && !goneAt.has(eid)) goneAt.set(eid, now);
    }
  });
  cache.start();
  return { count: () => n, bothAt, goneAt, stop: () => cache.stop(), synced: cache.waitForSync() };
}

const pct = (sorted: number[], p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
const ms = (x: number): number => Number(x.toFixed(3));

async function waitUntil(fn: () => boolean, timeoutMs: number, everyMs = 2): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!fn()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/**
 * How often the convergence wait reads the controller's status: a 10,000-endpoint status read
 * every 2 ms took ~0.3 s of the controller's event loop in a profile (the bench runs in its
 * process); every 20 ms, at most 20 ms on figures of seconds.
 */
const CONVERGENCE_POLL_MS = 20;

function summary(samples: number[]): Record<string, number> {
  samples.sort((a, b) => a - b);
  return {
    n: samples.length,
    p50_ms: ms(pct(samples, 50)),
    p90_ms: ms(pct(samples, 90)),
    p99_ms: ms(pct(samples, 99)),
    max_ms: ms(samples.at(-1)!),
  };
}

/** Creation latency; with notifications also deletion latency over the same endpoints. */
async function latency(notifications: boolean): Promise<Record<string, unknown>> {
  const env = await startEnv();
  const watch = servicesWatch(env);
  await watch.synced;
  const ctl = await controllerFor(env, { notifications, concurrency: args.concurrency });
  await ctl.caughtUp();
  const samples: number[] = [];
  const ids: string[] = [];
  for (let i = 0; i < args.latency; i++) {
    const ep = await env.client.endpoints.create({
      url: `http://lat-${i}.ns-${i % 100}`,
      bindings: ['kubernetes'],
    });
    const t0 = performance.now();
    await waitUntil(() => watch.bothAt.has(ep.id), 30_000);
    samples.push(watch.bothAt.get(ep.id)! - t0);
    ids.push(ep.id);
  }
  const deletes: number[] = [];
  if (notifications) {
    // One at a time, as creations: each proven by its own GET before its Services go.
    for (const id of ids) {
      await env.client.endpoints.delete(id);
      const t0 = performance.now();
      await waitUntil(() => watch.goneAt.has(id), 30_000);
      deletes.push(watch.goneAt.get(id)! - t0);
    }
  }
  await ctl.stop();
  await watch.stop();
  await env.stop();
  return { ...summary(samples), ...(notifications ? { deletion: summary(deletes) } : {}) };
}

async function createEndpoints(env: Env, n: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (next < n) {
        const i = next++;
        await env.client.endpoints.create({ url: `http://svc-${i}.ns-${i % 100}`, bindings: ['kubernetes'] });
      }
    }),
  );
}

/** The same 2N Services the controller writes, created directly with the same concurrency. */
async function baseline(n: number): Promise<number> {
  const env = await startEnv();
  const kube = new KubeClient(kubeConfigFrom({ kubeconfigPath: env.info.kubeconfig }));
  const services: Service[] = [];
  for (let i = 0; i < n; i++) {
    const internal = `ep-bench${String(i).padStart(22, '0')}`;
    const labels = { [MANAGED_BY_LABEL]: 'endpoint-binder', 'app.kubernetes.io/instance': 'endpoint-binder' };
    services.push({
      metadata: {
        name: internal,
        namespace: 'endpoint-binder',
        labels,
        annotations: {
          [ENDPOINT_ID_ANNOTATION]: internal,
          'endpoint-binder.io/ports': `{"${10000 + i}":"http://svc-${i}.ns-${i % 100}:80"}`,
        },
      },
      spec: {
        type: 'ClusterIP',
        selector: { 'app.kubernetes.io/component': 'forwarder' },
        ports: [{ name: 'http-80', port: 80, targetPort: 10000 + i, protocol: 'TCP' }],
      },
    });
    services.push({
      metadata: {
        name: `svc-${i}`,
        namespace: `ns-${i % 100}`,
        labels,
        annotations: { 'endpoint-binder.io/endpoint-ids': `["${internal}"]` },
      },
      spec: {
        type: 'ExternalName',
        externalName: `${internal}.endpoint-binder.svc.cluster.local`,
        ports: [{ name: 'http-80', port: 80, targetPort: 80, protocol: 'TCP' }],
      },
    });
  }
  const t0 = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: args.concurrency }, async () => {
      while (next < services.length) await kube.create(kinds.service, services[next++]!);
    }),
  );
  const elapsed = performance.now() - t0;
  await env.stop();
  return elapsed;
}

async function convergence(n: number, resync: boolean): Promise<Record<string, unknown>> {
  // The direct baseline varies by a third from one run to the next on a shared machine: it runs
  // on both sides of the controller, and the ratio is to their mean.
  const directBefore = await baseline(n);
  const env = await startEnv();
  await createEndpoints(env, n);
  global.gc?.();
  const rssBefore = process.memoryUsage().rss;
  const convergenceProfile = await windowProfiler(`convergence-${n}`);
  const t0 = performance.now();
  const ctl = await controllerFor(env, { concurrency: args.concurrency });
  // No bench-side watch here: this process's memory is the controller's alone.
  await waitUntil(() => ctl.status().lastFullSync !== null, 600_000, CONVERGENCE_POLL_MS);
  const listedMs = performance.now() - t0;
  await waitUntil(
    () => ctl.status().counts['projected'] === n && ctl.isReady(),
    600_000,
    CONVERGENCE_POLL_MS,
  );
  await waitUntil(() => applied(ctl) === 2 * n, 600_000, CONVERGENCE_POLL_MS);
  const controllerMs = performance.now() - t0;
  await convergenceProfile?.stop();
  let resyncReport: Record<string, number> | undefined;
  if (resync) {
    // A new leader makes one complete listing of its own after its first sync (the deletion
    // rules); a resync measured while it runs would count it too. Older controllers make none.
    listingsNow = 0;
    await waitUntil(() => listingsOk(ctl) >= 2, 10_000).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 500));
    // The convergence's last install-record write brings one more pass (no writes, ~1 s of CPU
    // at 10,000): wait until no pass has started for a second, so the resync is measured alone.
    for (let quiet = false, i = 0; !quiet && i < 30; i++) {
      const before = ctl.passCount();
      await new Promise((r) => setTimeout(r, 1000));
      quiet = ctl.passCount() === before;
    }
    // Status is computed when asked: asked once here, the last pass's share of it stays outside.
    ctl.status();
    global.gc?.();
    const writesBefore = await writes(ctl);
    const passes = ctl.passCount();
    const profiler = await windowProfiler('resync');
    const cpu0 = process.cpuUsage();
    const w0 = performance.now();
    if (!(await ctl.resyncNow())) throw new Error('resync failed');
    // A pass runs only if the listing changed something; give one the time to start and finish.
    await new Promise((r) => setTimeout(r, 200));
    await waitUntil(() => ctl.isReady(), 60_000);
    const cpu = process.cpuUsage(cpu0);
    await profiler?.stop();
    resyncReport = {
      endpoints: n,
      wall_ms: ms(performance.now() - w0),
      cpu_ms: ms((cpu.user + cpu.system) / 1000),
      kube_writes: (await writes(ctl)) - writesBefore,
      passes: ctl.passCount() - passes,
      rss_mib: Number((process.memoryUsage().rss / 1048576).toFixed(1)),
      rss_before_controller_mib: Number((rssBefore / 1048576).toFixed(1)),
      heap_used_mib: Number((process.memoryUsage().heapUsed / 1048576).toFixed(1)),
    };
  }
  const statusReport = resync ? await statusLatency(ctl) : undefined;
  const restartReport = resync ? await restartWrites(env, ctl, n) : undefined;
  if (!restartReport) await ctl.stop();
  await env.stop();
  const directAfter = await baseline(n);
  const baselineMs = (directBefore + directAfter) / 2;
  return {
    endpoints: n,
    services: 2 * n,
    controller_ms: ms(controllerMs),
    registered_and_listed_ms: ms(listedMs),
    direct_ms: ms(baselineMs),
    direct_runs_ms: [ms(directBefore), ms(directAfter)],
    ratio: Number((controllerMs / baselineMs).toFixed(3)),
    ...(resyncReport ? { resync: resyncReport } : {}),
    ...(statusReport ? { status: statusReport } : {}),
    ...(restartReport ? { restart: restartReport } : {}),
  };
}

/**
 * `/status` over HTTP at the converged size, as `endpoint-binder status` and `check` read it:
 * 20 GETs one after another, each timed to the last byte of the body.
 */
async function statusLatency(ctl: Controller): Promise<Record<string, number>> {
  const samples: number[] = [];
  let bytes = 0;
  for (let i = 0; i < 20; i++) {
    const t0 = performance.now();
    const res = await fetch(`${ctl.url}/status`);
    const body = await res.arrayBuffer();
    samples.push(performance.now() - t0);
    if (res.status !== 200) throw new Error(`/status answered ${res.status}`);
    bytes = body.byteLength;
  }
  return { ...summary(samples), body_bytes: bytes };
}

/**
 * A restart over the converged cluster: the leader stops, a new process leads; Service writes
 * counted by a bench-side watch of the API server (and the new controller's own counter), and the
 * time until it is ready with every endpoint projected.
 */
async function restartWrites(env: Env, ctl: Controller, n: number): Promise<Record<string, number>> {
  let events = 0;
  const cache = ownedServicesCache(env);
  for (const ev of ['add', 'update', 'delete'] as const) cache.on(ev, () => events++);
  cache.start();
  await cache.waitForSync();
  const seen = events;
  await ctl.stop();
  const t0 = performance.now();
  const next = await controllerFor(env, { concurrency: args.concurrency });
  await waitUntil(
    () => next.isLeader() && next.isReady() && next.status().counts['projected'] === n,
    600_000,
    CONVERGENCE_POLL_MS,
  );
  const readyMs = performance.now() - t0;
  await new Promise((r) => setTimeout(r, 2000));
  const report = {
    ready_ms: ms(readyMs),
    service_writes_seen_by_watch: events - seen,
    controller_kube_writes: await writes(next),
  };
  await next.stop();
  await cache.stop();
  return report;
}

/**
 * BENCH_CPU_PROF=<dir>: CPU profiles of the measured windows alone (`convergence-<n>.cpuprofile`,
 * `resync.cpuprofile`); `node --cpu-prof` would mix in endpoint creation and baselines.
 */
async function windowProfiler(name: string): Promise<{ stop(): Promise<void> } | undefined> {
  const dir = process.env['BENCH_CPU_PROF'];
  if (!dir) return undefined;
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  return {
    async stop() {
      const { profile } = await session.post('Profiler.stop');
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, `${name}.cpuprofile`), JSON.stringify(profile));
      session.disconnect();
    },
  };
}

let appliedNow = 0;
/** Desired Services that match the cluster, from the controller's own gauge (kept fresh by a poller). */
function applied(ctl: Controller): number {
  void ctl.registry
    .getSingleMetric('endpoint_binder_services_applied')
    ?.get()
    .then((m) => (appliedNow = m.values.reduce((s, v) => s + v.value, 0)));
  return appliedNow;
}

let listingsNow = 0;
/** Complete endpoint listings the controller finished, from its own counter (kept fresh by a poller). */
function listingsOk(ctl: Controller): number {
  void ctl.registry
    .getSingleMetric('endpoint_binder_api_calls_total')
    ?.get()
    .then(
      (m) =>
        (listingsNow = m.values
          .filter((v) => v.labels['call'] === 'list_bound_endpoints' && v.labels['result'] === 'ok')
          .reduce((s, v) => s + v.value, 0)),
    );
  return listingsNow;
}

async function writes(ctl: Controller): Promise<number> {
  const m = await ctl.registry.getSingleMetric('endpoint_binder_kube_writes_total')?.get();
  return (m?.values ?? []).reduce((s, v) => s + v.value, 0);
}

const report: Record<string, unknown> = {
  node: process.version,
  concurrency: args.concurrency,
  target: args.target,
};
report['latency_notifications'] = await latency(true);
report['latency_polling_only'] = await latency(false);
const conv: Record<string, unknown>[] = [];
const largest = Math.max(...args.sizes);
for (const n of args.sizes) conv.push(await convergence(n, n === largest));
report['convergence'] = conv;
process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
