import type { ChildProcess } from 'node:child_process';
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from '../../log/logger.js';
import { Backoff } from '../../time/backoff.js';
import { createCache, type Cache } from '../../kube/cache/reflector.js';
import { KubeObjectSchema, type KubeObject as ApiObject } from '../../kube/objects.js';
import { isRecord, type KubeObject } from '../types.js';
import { NodeApi } from './node-api.js';
import { podReferences, resolveEnv } from './pod-env.js';
import { PodIpPool } from './pod-ips.js';
import { podStatus, rfc3339, type ContainerState } from './pod-status.js';
import {
  initialProbeState,
  nextProbeState,
  probeSchema,
  probeTarget,
  runProbe,
  type Probe,
  type ProbeState,
  type ProbeTarget,
} from './probe.js';
import { resolveVolumes, type Lookup } from './pod-volumes.js';
import type { PodContainer, PodRunner } from './runner.js';

/**
 * The process node agent: one kubelet for any API server, over HTTP. It watches the Pods of its
 * namespaces, binds unscheduled ones to its Node when asked to schedule (the stand-in for
 * kube-scheduler: one node, nothing to choose), and runs every Pod bound to it as a child process
 * through the caller's PodRunner: env and volumes resolved at each start (a missing Secret or
 * ConfigMap keeps the pod waiting with the kubelet's reason), the readinessProbe, pods/status
 * (phase, podIP, Ready, the container's state and termination message), restarts (restartPolicy,
 * crash-loop backoff), and deletion as a kubelet does it: on a deletionTimestamp SIGTERM, SIGKILL
 * once deletionGracePeriodSeconds have passed, and the Pod object removed when the process has
 * exited. `endpoint-binder kubesim --workloads` and the real-control-plane test tier both use it.
 */

type Rec = Record<string, unknown>;
const rec = (v: unknown): Rec => (isRecord(v) ? v : {});

export interface NodeAgentOptions {
  kubeConfig: KubeConfig;
  runner: PodRunner;
  log: Logger;
  nodeName: string;
  /** Register the Node and bind this agent's unscheduled pods to it. */
  schedule?: boolean;
  /** Only pods of these namespaces are bound and run (default: all). */
  namespaces?: readonly string[];
  /** The token of a pod's ServiceAccount (pods that mount one); none when it throws. */
  serviceAccountToken?: (namespace: string, name: string) => string | Promise<string>;
  /** The kubelet's crash-loop backoff by default: 10 s doubling to 5 min. */
  crashBackoff?: { initialMs: number; maxMs: number };
  /** Probe at least this often (ms), whatever the pod asks: test tiers that wait on readiness. */
  maxProbePeriodMs?: number;
}

export interface NodeAgent {
  readonly nodeName: string;
  /** When a running pod's Ready condition last became true (ms), while it is ready. */
  readySinceMs(uid: string): number | undefined;
  /** The tail of every pod process's output so far, by pod name (for failure messages). */
  outputs(): Record<string, string>;
  /** The process of a running pod's container (a test kills it as the OOM killer would). */
  pid(podName: string): number | undefined;
  /** Stops watching, then every process: SIGTERM, SIGKILL after `graceMs`, bounded by `graceMs` + 2 s. */
  stop(graceMs?: number): Promise<void>;
}

interface RunningPod {
  uid: string;
  namespace: string;
  name: string;
  podIP: string;
  container: PodContainer;
  image?: string;
  startTime: string;
  child?: ChildProcess;
  exited?: Promise<void>;
  state: ContainerState;
  restartCount: number;
  probe?: Probe;
  target?: ProbeTarget;
  probeProblem?: string;
  probeState: ProbeState;
  probeTimer?: NodeJS.Timeout;
  probing: boolean;
  readySinceMs?: number;
  terminating: boolean;
  killAtMs?: number;
  killTimer?: NodeJS.Timeout;
  restartTimer?: NodeJS.Timeout;
  backoff: Backoff;
  gone: boolean;
  /** The tail of the container's output (the runtime's log). */
  logTail: string;
  /** Status writes in order. */
  writes: Promise<void>;
  /** Between admission (or a restart) and the process: a deletion now is seen by launch(). */
  launching: boolean;
}

/** What the kubelet keeps of a container's log for its termination message (2 KiB). */
const TERMINATION_LOG_BYTES = 2048;
/** What is kept of each pod's output for outputs(). */
const OUTPUT_TAIL_BYTES = 16_384;
const CONFIG_RETRY_MS = 2000;
const KUBELET_CRASH_BACKOFF = { initialMs: 10_000, maxMs: 300_000 };

export async function startNodeAgent(opts: NodeAgentOptions): Promise<NodeAgent> {
  const agent = new ProcessNode(opts);
  await agent.start();
  return agent;
}

class ProcessNode implements NodeAgent {
  readonly nodeName: string;
  private readonly api: NodeApi;
  private readonly pods = new Map<string, RunningPod>();
  private readonly ips = new PodIpPool();
  private readonly caches: Cache<ApiObject>[] = [];
  private readonly outputTails: Record<string, string> = {};
  private readonly log: Logger;
  private stopped = false;

  constructor(private readonly opts: NodeAgentOptions) {
    this.nodeName = opts.nodeName;
    this.api = new NodeApi(opts.kubeConfig);
    this.log = opts.log.child({ node: opts.nodeName });
  }

  async start(): Promise<void> {
    if (this.opts.schedule) await this.api.registerNode(this.nodeName);
    const paths = this.opts.namespaces
      ? this.opts.namespaces.map((ns) => `/api/v1/namespaces/${encodeURIComponent(ns)}/pods`)
      : ['/api/v1/pods'];
    for (const path of paths) {
      const cache = createCache({
        transport: this.api.transport,
        path,
        name: `node ${this.nodeName} ${path}`,
        schema: KubeObjectSchema,
        logger: this.log,
        options: { rewatchDelayMs: 50, minWatchMs: 200 },
      });
      cache.on('add', (pod) => this.onPod(asPod(pod)));
      cache.on('update', (_old, pod) => this.onPod(asPod(pod)));
      cache.on('delete', (pod) => this.onDeleted(asPod(pod)));
      cache.start();
      this.caches.push(cache);
    }
    await Promise.all(this.caches.map((c) => c.waitForSync()));
  }

  readySinceMs(uid: string): number | undefined {
    return this.pods.get(uid)?.readySinceMs;
  }

  outputs(): Record<string, string> {
    for (const run of this.pods.values()) this.outputTails[run.name] = run.logTail;
    return { ...this.outputTails };
  }

  pid(podName: string): number | undefined {
    for (const run of this.pods.values())
      if (run.name === podName && run.child && run.child.exitCode === null && run.child.signalCode === null)
        return run.child.pid;
    return undefined;
  }

  async stop(graceMs = 2000): Promise<void> {
    this.stopped = true;
    await Promise.all(this.caches.map((c) => c.stop()));
    const waits: Promise<void>[] = [];
    for (const run of this.pods.values()) {
      clearTimeout(run.probeTimer);
      clearTimeout(run.restartTimer);
      clearTimeout(run.killTimer);
      const child = run.child;
      if (!child || !run.exited || child.exitCode !== null || child.signalCode !== null) continue;
      child.kill('SIGTERM');
      const kill = setTimeout(() => child.kill('SIGKILL'), graceMs);
      waits.push(run.exited.finally(() => clearTimeout(kill)));
    }
    await Promise.race([Promise.all(waits), new Promise((r) => setTimeout(r, graceMs + 2000).unref())]);
  }

  private current(run: RunningPod): KubeObject | undefined {
    for (const cache of this.caches) {
      const pod = cache.get(run.namespace, run.name);
      if (pod) return pod.metadata.uid === run.uid ? asPod(pod) : undefined;
    }
    return undefined;
  }

  private onDeleted(pod: KubeObject): void {
    const run = this.pods.get(pod.metadata.uid ?? '');
    if (this.stopped || !run || run.gone) return;
    // Removed under the kubelet (force delete, namespace cascade): stop it the same way.
    run.gone = true;
    this.terminate(run, graceSeconds(pod));
  }

  private onPod(pod: KubeObject): void {
    if (this.stopped) return;
    const nodeName = rec(pod['spec'])['nodeName'];
    if (nodeName === undefined || nodeName === '') {
      if (this.opts.schedule && !pod.metadata.deletionTimestamp) this.bind(pod);
      return;
    }
    if (nodeName !== this.nodeName) return;
    const uid = pod.metadata.uid ?? '';
    const run = this.pods.get(uid);
    if (!run) {
      const phase = rec(pod['status'])['phase'];
      if (pod.metadata.deletionTimestamp) {
        void this.api.remove(pod.metadata.namespace ?? '', pod.metadata.name, uid);
        return;
      }
      // Finished before this agent started (or restarted): nothing to run again.
      if (phase === 'Succeeded' || phase === 'Failed') return;
      this.admit(pod);
      return;
    }
    if (pod.metadata.deletionTimestamp) this.terminate(run, graceSeconds(pod));
  }

  private readonly binding = new Set<string>();
  private bind(pod: KubeObject): void {
    const uid = pod.metadata.uid ?? '';
    if (this.binding.has(uid)) return;
    this.binding.add(uid);
    const where = `${pod.metadata.namespace ?? ''}/${pod.metadata.name}`;
    void this.api
      .bind(pod.metadata.namespace ?? '', pod.metadata.name, this.nodeName)
      .catch((err: unknown) => {
        this.log.warn({ pod: where, err: String(err) }, 'node agent could not bind pod');
        this.binding.delete(uid);
      });
  }

  /** A new pod: its IP, its container, its probe; then the process. */
  private admit(pod: KubeObject): void {
    const first = firstContainer(pod);
    const ports = (Array.isArray(first['ports']) ? first['ports'] : []).flatMap((p) => {
      const r = rec(p);
      return typeof r['containerPort'] === 'number'
        ? [
            {
              containerPort: r['containerPort'],
              ...(typeof r['name'] === 'string' ? { name: r['name'] } : {}),
            },
          ]
        : [];
    });
    const run: RunningPod = {
      uid: pod.metadata.uid ?? '',
      namespace: pod.metadata.namespace ?? '',
      name: pod.metadata.name,
      podIP: this.ips.take(),
      container: {
        name: typeof first['name'] === 'string' ? first['name'] : '',
        ...(Array.isArray(first['command']) ? { command: first['command'].map(String) } : {}),
        ...(Array.isArray(first['args']) ? { args: first['args'].map(String) } : {}),
        env: {},
        ports,
      },
      ...(typeof first['image'] === 'string' ? { image: first['image'] } : {}),
      startTime: rfc3339(Date.now()),
      state: { waiting: { reason: 'ContainerCreating' } },
      restartCount: 0,
      probeState: initialProbeState,
      probing: false,
      terminating: false,
      backoff: new Backoff({
        ...(this.opts.crashBackoff ?? KUBELET_CRASH_BACKOFF),
        jitter: 0,
        resetAfterMs: 600_000,
      }),
      gone: false,
      logTail: '',
      writes: Promise.resolve(),
      launching: false,
    };
    this.pods.set(run.uid, run);
    run.launching = true;
    void this.prepare(run, first).then(
      () => this.launch(run, pod),
      (err: unknown) => {
        run.launching = false;
        this.log.warn(
          { pod: `${run.namespace}/${run.name}`, err: String(err) },
          'node agent could not admit pod',
        );
        if (run.terminating) void this.remove(run);
      },
    );
  }

  /** The readinessProbe's target at the pod's IP. */
  private async prepare(run: RunningPod, first: Rec): Promise<void> {
    if (first['readinessProbe'] === undefined) return;
    const parsed = probeSchema.safeParse(first['readinessProbe']);
    if (!parsed.success) {
      run.probeProblem = `readinessProbe: ${parsed.error.issues[0]?.message ?? 'invalid'}`;
      return;
    }
    const probe = parsed.data;
    const max = this.opts.maxProbePeriodMs;
    if (max !== undefined) {
      probe.periodSeconds = Math.min(probe.periodSeconds, Math.max(1, Math.floor(max / 1000)));
      probe.initialDelaySeconds = 0;
    }
    run.probe = probe;
    const target = probeTarget(probe, run.podIP, run.container.ports);
    if ('problem' in target) run.probeProblem = target.problem;
    else run.target = target;
  }

  /** What the pod refers to, fetched now: env and volumes are resolved from it at each start. */
  private async lookupFor(pod: KubeObject, first: Rec): Promise<Lookup> {
    const found = new Map<string, KubeObject | undefined>();
    const typed = (o: ApiObject | undefined, kind: string): KubeObject | undefined =>
      o ? { ...o, apiVersion: 'v1', kind } : undefined;
    const namespace = pod.metadata.namespace ?? '';
    for (const ref of podReferences(pod, first))
      found.set(
        `${ref.plural}/${ref.name}`,
        typed(
          await this.api.read(ref.plural, namespace, ref.name),
          ref.plural === 'secrets' ? 'Secret' : 'ConfigMap',
        ),
      );
    return (plural, _namespace, name) => found.get(`${plural}/${name}`);
  }

  private async launch(run: RunningPod, pod: KubeObject): Promise<void> {
    run.launching = true;
    try {
      await this.launchOnce(run, pod);
    } finally {
      run.launching = false;
    }
  }

  /** False (and the pod removed when it was deleted meanwhile) when the start must not go on. */
  private mayStart(run: RunningPod): boolean {
    if (this.stopped) return false;
    if (!run.terminating && !run.gone) return true;
    void this.remove(run);
    return false;
  }

  private async launchOnce(run: RunningPod, pod: KubeObject): Promise<void> {
    if (!this.mayStart(run)) return;
    const spec = rec(pod['spec']);
    const first = firstContainer(pod);
    let lookup: Lookup;
    try {
      lookup = await this.lookupFor(pod, first);
    } catch (err) {
      this.log.warn(
        { pod: `${run.namespace}/${run.name}`, err: String(err) },
        'node agent could not read pod config',
      );
      this.retryLaunch(run);
      return;
    }
    const env = resolveEnv(
      pod,
      first,
      { nodeName: this.nodeName, podIP: run.podIP, hostIP: '127.0.0.1' },
      lookup,
    );
    const volumes = 'error' in env ? undefined : resolveVolumes(pod, first, lookup);
    if ('error' in env || !Array.isArray(volumes)) {
      run.state = {
        waiting:
          'error' in env
            ? { reason: 'CreateContainerConfigError', message: env.error }
            : (volumes as { reason: string; message: string }),
      };
      this.writeStatus(run, 'Pending');
      this.retryLaunch(run);
      return;
    }
    for (const name of env.unresolved)
      this.log.warn(
        { pod: `${run.namespace}/${run.name}`, env: name },
        'node agent pod env reference not resolved',
      );
    run.container = { ...run.container, env: env.env };
    const account = typeof spec['serviceAccountName'] === 'string' ? spec['serviceAccountName'] : 'default';
    const token =
      spec['automountServiceAccountToken'] !== false
        ? await this.tokenFor(run.namespace, account)
        : undefined;
    if (!this.mayStart(run)) return;
    let child: ChildProcess;
    try {
      child = await this.opts.runner({
        namespace: run.namespace,
        name: run.name,
        uid: run.uid,
        podIP: run.podIP,
        container: run.container,
        pod,
        volumes,
        ...(token !== undefined ? { serviceAccountToken: token } : {}),
      });
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      this.log.warn({ pod: `${run.namespace}/${run.name}`, err: message }, 'node agent pod runner failed');
      run.state = { waiting: { reason: 'RunContainerError', message } };
      this.writeStatus(run, 'Pending');
      return;
    }
    this.started(run, child);
  }

  private retryLaunch(run: RunningPod): void {
    run.restartTimer = setTimeout(() => {
      const current = this.current(run);
      if (this.stopped || run.terminating || !current) return;
      void this.launch(run, current);
    }, CONFIG_RETRY_MS);
  }

  /** The process runs: its output is kept, its exit handled, its probe started. */
  private started(run: RunningPod, child: ChildProcess): void {
    run.child = child;
    run.logTail = '';
    const keep = (chunk: Buffer): void => {
      run.logTail = (run.logTail + chunk.toString('utf8')).slice(-OUTPUT_TAIL_BYTES);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    run.exited = new Promise<void>((resolve) => {
      child.once('exit', (code, signal) => {
        this.onExit(run, child, code, signal);
        resolve();
      });
      child.once('error', (err) => {
        // spawn failed: no 'exit' follows.
        if (child.pid === undefined) {
          this.onExit(run, child, 128, null, err.message);
          resolve();
        }
      });
    });
    // Deleted while starting: stop it now.
    if (run.terminating || run.gone || this.stopped) {
      const pod = this.current(run);
      run.terminating = false;
      this.terminate(run, pod ? graceSeconds(pod) : 0);
      return;
    }
    run.state = { running: { startedAt: rfc3339(Date.now()) } };
    run.probeState = initialProbeState;
    if (!run.probe && !run.probeProblem) this.setReady(run, true);
    this.writeStatus(run, 'Running');
    if (run.target && run.probe) this.probe(run, child, run.probe, run.target);
  }

  private probe(run: RunningPod, child: ChildProcess, probe: Probe, target: ProbeTarget): void {
    const alive = (): boolean => run.child === child && child.exitCode === null && child.signalCode === null;
    const tick = (): void => {
      if (!alive()) return;
      run.probeTimer = setTimeout(tick, probe.periodSeconds * 1000);
      if (run.probing) return;
      run.probing = true;
      void runProbe(target, probe.timeoutSeconds * 1000).then((ok) => {
        run.probing = false;
        if (!alive()) return;
        const next = nextProbeState(run.probeState, ok, probe);
        const changed = next.ready !== run.probeState.ready;
        run.probeState = next;
        if (changed) {
          this.setReady(run, next.ready);
          this.writeStatus(run, 'Running');
        }
      });
    };
    run.probeTimer = setTimeout(
      tick,
      this.opts.maxProbePeriodMs !== undefined ? 200 : probe.initialDelaySeconds * 1000,
    );
  }

  private async tokenFor(namespace: string, account: string): Promise<string | undefined> {
    try {
      return await this.opts.serviceAccountToken?.(namespace, account);
    } catch {
      return undefined;
    }
  }

  private setReady(run: RunningPod, ready: boolean): void {
    if (ready) run.readySinceMs ??= Date.now();
    else delete run.readySinceMs;
  }

  private onExit(
    run: RunningPod,
    child: ChildProcess,
    code: number | null,
    signal: NodeJS.Signals | null,
    message?: string,
  ): void {
    if (run.child !== child) return;
    clearTimeout(run.probeTimer);
    clearTimeout(run.killTimer);
    this.setReady(run, false);
    this.outputTails[run.name] = run.logTail;
    const exitCode = code ?? 128 + signalNumber(signal);
    const first = firstContainer(this.current(run));
    if (!message && exitCode !== 0 && first['terminationMessagePolicy'] === 'FallbackToLogsOnError')
      message = run.logTail.slice(-TERMINATION_LOG_BYTES).trimEnd() || undefined;
    run.state = {
      terminated: {
        exitCode,
        ...(signal ? { signal: signalNumber(signal) } : {}),
        reason: exitCode === 0 ? 'Completed' : 'Error',
        finishedAt: rfc3339(Date.now()),
        ...(message ? { message } : {}),
      },
    };
    if (this.stopped) return;
    if (run.terminating || run.gone) {
      void this.remove(run);
      return;
    }
    const policy = rec(this.current(run)?.['spec'])['restartPolicy'] ?? 'Always';
    if (policy === 'Never' || (policy === 'OnFailure' && exitCode === 0)) {
      this.writeStatus(run, exitCode === 0 ? 'Succeeded' : 'Failed');
      return;
    }
    const delay = run.backoff.next(Date.now(), 0);
    run.state = {
      waiting: {
        reason: 'CrashLoopBackOff',
        message: `back-off ${Math.round(delay / 1000)}s restarting failed container=${run.container.name} pod=${run.name}`,
      },
    };
    this.writeStatus(run, 'Running');
    run.restartTimer = setTimeout(() => {
      const current = this.current(run);
      if (this.stopped || run.terminating || !current) return;
      run.restartCount++;
      void this.launch(run, current);
    }, delay);
  }

  /** SIGTERM now (once), SIGKILL when the grace period is over; a shorter grace moves SIGKILL closer. */
  private terminate(run: RunningPod, graceSeconds: number): void {
    clearTimeout(run.restartTimer);
    const child = run.child;
    const running = child && child.exitCode === null && child.signalCode === null;
    if (!running) {
      // Still starting: launch() sees the flag and removes it, or started() stops the process.
      run.terminating = true;
      if (!run.launching) void this.remove(run);
      return;
    }
    const killAt = Date.now() + graceSeconds * 1000;
    if (!run.terminating) {
      run.terminating = true;
      this.log.debug({ pod: `${run.namespace}/${run.name}`, graceSeconds }, 'node agent pod terminating');
      if (graceSeconds > 0) child.kill('SIGTERM');
    }
    if (run.killAtMs !== undefined && run.killAtMs <= killAt) return;
    run.killAtMs = killAt;
    clearTimeout(run.killTimer);
    run.killTimer = setTimeout(() => child.kill('SIGKILL'), Math.max(0, killAt - Date.now()));
  }

  /** The process has exited: the Pod object goes (uid precondition: never a successor's). */
  private async remove(run: RunningPod): Promise<void> {
    if (this.pods.get(run.uid) !== run) return;
    this.pods.delete(run.uid);
    clearTimeout(run.probeTimer);
    clearTimeout(run.killTimer);
    clearTimeout(run.restartTimer);
    this.ips.release(run.podIP);
    await run.writes;
    await this.api.remove(run.namespace, run.name, run.uid);
  }

  private writeStatus(run: RunningPod, phase: 'Pending' | 'Running' | 'Succeeded' | 'Failed'): void {
    run.writes = run.writes.then(async () => {
      if (this.stopped || run.gone) return;
      // What is observed now, not when the write was asked for.
      const ready = run.readySinceMs !== undefined && 'running' in run.state;
      const observed = {
        phase,
        podIP: run.podIP,
        startTime: run.startTime,
        containerName: run.container.name,
        ...(run.image ? { image: run.image } : {}),
        ready,
        ...(run.probeProblem ? { notReadyMessage: run.probeProblem } : {}),
        restartCount: run.restartCount,
        state: run.state,
        ...(run.child?.pid !== undefined ? { pid: run.child.pid } : {}),
      };
      const readySince = run.readySinceMs && ready ? run.readySinceMs : Date.now();
      try {
        await this.api.writeStatus(run.namespace, run.name, run.uid, (pod) =>
          statusFor(asPod(pod), podStatus(observed, pod['status'], readySince)),
        );
      } catch (err) {
        this.log.debug(
          { pod: `${run.namespace}/${run.name}`, err: String(err) },
          'node agent pod status not written',
        );
      }
    });
  }
}

/**
 * The status as written: every container reports what the first (the one run here) does, and the
 * qosClass the API server set at creation stays (it is immutable).
 */
function statusFor(pod: KubeObject, status: Record<string, unknown>): Record<string, unknown> {
  const containers = rec(pod['spec'])['containers'];
  const mine = rec(Array.isArray(status['containerStatuses']) ? status['containerStatuses'][0] : undefined);
  const statuses = (Array.isArray(containers) ? containers : []).map(rec).map((c, i) => ({
    ...mine,
    name: typeof c['name'] === 'string' ? c['name'] : '',
    image: typeof c['image'] === 'string' ? c['image'] : '',
    ...(i > 0 ? { restartCount: 0 } : {}),
  }));
  const qosClass = rec(pod['status'])['qosClass'];
  return {
    ...status,
    ...(typeof qosClass === 'string' ? { qosClass } : {}),
    ...(statuses.length ? { containerStatuses: statuses } : {}),
  };
}

/** A pod as the API sent it (list items carry no kind). */
function asPod(o: ApiObject): KubeObject {
  return { ...o, apiVersion: 'v1', kind: 'Pod' };
}

function firstContainer(pod: KubeObject | undefined): Rec {
  const spec = rec(pod?.['spec']);
  return rec(Array.isArray(spec['containers']) ? spec['containers'][0] : undefined);
}

function graceSeconds(pod: KubeObject): number {
  const g = pod.metadata['deletionGracePeriodSeconds'];
  if (typeof g === 'number' && g >= 0) return g;
  const own = rec(pod['spec'])['terminationGracePeriodSeconds'];
  return typeof own === 'number' && own >= 0 ? own : 30;
}

function signalNumber(signal: NodeJS.Signals | null): number {
  return signal === 'SIGKILL' ? 9 : signal === 'SIGTERM' ? 15 : signal === 'SIGINT' ? 2 : 0;
}
