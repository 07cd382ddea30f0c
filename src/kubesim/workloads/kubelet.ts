import type { ChildProcess } from 'node:child_process';
import type { Logger } from '../../log/logger.js';
import { Backoff } from '../../time/backoff.js';
import type { ResourceHandlers } from '../handlers.js';
import { resourceKey, statusView, type ResourceDef } from '../resources/registry.js';
import { objectKey, type Store, type StoreEvent } from '../store.js';
import { isRecord, type KubeObject } from '../types.js';
import { KUBESIM_NODE } from './pod-template.js';
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
import { keyRef, resolveVolumes, type Lookup } from './pod-volumes.js';
import type { PodContainer, PodRunner } from './runner.js';

/**
 * kubesim's kubelet for the one node `kubesim`: every Pod bound to it runs as a child process
 * through the caller's PodRunner. It writes the pod's status (Running, podIP, Ready from the
 * readiness probe), restarts a container that exits on its own (restartPolicy Always, with the
 * kubelet's crash-loop backoff), and deletes as a kubelet does: on a deletionTimestamp it sends
 * SIGTERM, SIGKILL once deletionGracePeriodSeconds have passed, and removes the Pod object when
 * the process has exited.
 */

type Rec = Record<string, unknown>;
const rec = (v: unknown): Rec => (isRecord(v) ? v : {});

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
  /** When the Ready condition last became true (ms), for minReadySeconds. */
  readySinceMs?: number;
  terminating: boolean;
  /** When SIGKILL is due (ms), while terminating. */
  killAtMs?: number;
  killTimer?: NodeJS.Timeout;
  restartTimer?: NodeJS.Timeout;
  backoff: Backoff;
  gone: boolean;
  /** The tail of the container's output (the runtime's log), when the runner gave pipes. */
  logTail: string;
}

/** What the kubelet keeps of a container's log for its termination message (as the kubelet: 2 KiB). */
const TERMINATION_LOG_BYTES = 2048;
/** How often a pod waiting for a Secret or ConfigMap is tried again. */
const CONFIG_RETRY_MS = 2000;

/** The kubelet's crash-loop backoff: 10 s doubling to 5 min, reset after 10 min of running. */
const CRASH_BACKOFF = { initialMs: 10_000, maxMs: 300_000, jitter: 0, resetAfterMs: 600_000 };

export class Kubelet {
  private readonly pods = new Map<string, RunningPod>();
  private readonly ips = new PodIpPool();
  private readonly status: ResourceDef;
  private readonly resource: string;
  private unsubscribe: (() => void) | undefined;
  private stopped = false;

  constructor(
    private readonly store: Store,
    private readonly handlers: ResourceHandlers,
    private readonly podsDef: ResourceDef,
    private readonly runner: PodRunner,
    private readonly log: Logger,
    private readonly serviceAccountToken?: (namespace: string, name: string) => string,
  ) {
    this.status = statusView(podsDef);
    this.resource = resourceKey(podsDef);
  }

  start(): void {
    this.unsubscribe = this.store.subscribe((ev) => {
      // Store listeners run inside the write: act after it.
      if (ev.resource === this.resource) setImmediate(() => this.onEvent(ev));
    });
    for (const pod of this.store.list(this.resource)) setImmediate(() => this.onPod(pod));
  }

  /** When the pod's Ready condition last became true (ms), while it is ready. */
  readySinceMs(uid: string): number | undefined {
    return this.pods.get(uid)?.readySinceMs;
  }

  /** Stops every process: SIGTERM, SIGKILL after `graceMs`, bounded by `graceMs` + 2 s overall. */
  async stop(graceMs = 2000): Promise<void> {
    this.stopped = true;
    this.unsubscribe?.();
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

  private onEvent(ev: StoreEvent): void {
    if (this.stopped) return;
    if (ev.type === 'DELETED') {
      const run = this.pods.get(ev.object.metadata.uid ?? '');
      if (run && !run.gone) {
        // Removed under the kubelet (force delete, namespace cascade): stop it the same way.
        run.gone = true;
        this.terminate(run, graceSeconds(ev.object));
      }
      return;
    }
    const pod = this.store.get(this.resource, objectKey(ev.object));
    if (pod && pod.metadata.uid === ev.object.metadata.uid) this.onPod(pod);
  }

  private onPod(pod: KubeObject): void {
    if (this.stopped) return;
    if (rec(pod['spec'])['nodeName'] !== KUBESIM_NODE) return;
    const uid = pod.metadata.uid ?? '';
    const run = this.pods.get(uid);
    if (!run) {
      if (pod.metadata.deletionTimestamp) {
        void this.remove(pod.metadata.namespace ?? '', pod.metadata.name, uid);
        return;
      }
      this.admit(pod);
      return;
    }
    if (pod.metadata.deletionTimestamp) this.terminate(run, graceSeconds(pod));
  }

  /** A new pod: its IP, its container, its probe; then the process. */
  private admit(pod: KubeObject): void {
    const spec = rec(pod['spec']);
    const first = rec(Array.isArray(spec['containers']) ? spec['containers'][0] : undefined);
    const namespace = pod.metadata.namespace ?? '';
    const podIP = this.ips.take();
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
    const container: PodContainer = {
      name: typeof first['name'] === 'string' ? first['name'] : '',
      ...(Array.isArray(first['command']) ? { command: first['command'].map(String) } : {}),
      ...(Array.isArray(first['args']) ? { args: first['args'].map(String) } : {}),
      env: {},
      ports,
    };
    const run: RunningPod = {
      uid: pod.metadata.uid ?? '',
      namespace,
      name: pod.metadata.name,
      podIP,
      container,
      ...(typeof first['image'] === 'string' ? { image: first['image'] } : {}),
      startTime: rfc3339(Date.now()),
      state: { waiting: { reason: 'ContainerCreating' } },
      restartCount: 0,
      probeState: initialProbeState,
      probing: false,
      terminating: false,
      backoff: new Backoff(CRASH_BACKOFF),
      gone: false,
      logTail: '',
    };
    if (first['readinessProbe'] !== undefined) {
      const parsed = probeSchema.safeParse(first['readinessProbe']);
      if (!parsed.success)
        run.probeProblem = `readinessProbe: ${parsed.error.issues[0]?.message ?? 'invalid'}`;
      else {
        run.probe = parsed.data;
        const target = probeTarget(parsed.data, podIP, ports);
        if ('problem' in target) run.probeProblem = target.problem;
        else run.target = target;
      }
    }
    this.pods.set(run.uid, run);
    this.launch(run, pod);
  }

  private launch(run: RunningPod, pod: KubeObject): void {
    // As a node's kubelet: env and volumes are resolved at each container start; a missing
    // Secret or ConfigMap keeps the pod waiting with the reason, tried again.
    const spec = rec(pod['spec']);
    const first = rec(Array.isArray(spec['containers']) ? spec['containers'][0] : undefined);
    const env = this.resolveEnv(pod, first, run.podIP);
    const volumes = 'error' in env ? undefined : resolveVolumes(pod, first, this.lookup);
    if ('error' in env || !Array.isArray(volumes)) {
      run.state = {
        waiting:
          'error' in env
            ? { reason: 'CreateContainerConfigError', message: env.error }
            : (volumes as { reason: string; message: string }),
      };
      this.writeStatus(run, 'Pending');
      run.restartTimer = setTimeout(() => {
        const current = this.store.get(this.resource, `${run.namespace}/${run.name}`);
        if (this.stopped || run.terminating || !current || current.metadata.uid !== run.uid) return;
        this.launch(run, current);
      }, CONFIG_RETRY_MS);
      return;
    }
    run.container = { ...run.container, env: env.env };
    const account = typeof spec['serviceAccountName'] === 'string' ? spec['serviceAccountName'] : 'default';
    const token =
      spec['automountServiceAccountToken'] !== false ? this.tokenFor(run.namespace, account) : undefined;
    let child: ChildProcess;
    try {
      child = this.runner({
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
      this.log.warn({ pod: `${run.namespace}/${run.name}`, err: message }, 'kubesim pod runner failed');
      run.state = { waiting: { reason: 'RunContainerError', message } };
      this.writeStatus(run, 'Pending');
      return;
    }
    run.child = child;
    run.logTail = '';
    const keep = (chunk: Buffer): void => {
      run.logTail = (run.logTail + chunk.toString('utf8')).slice(-TERMINATION_LOG_BYTES);
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
    run.state = { running: { startedAt: rfc3339(Date.now()) } };
    run.probeState = initialProbeState;
    if (!run.probe && !run.probeProblem) this.setReady(run, true);
    this.writeStatus(run, 'Running');
    if (run.target && run.probe) {
      const probe = run.probe;
      const target = run.target;
      const tick = (): void => {
        if (run.child !== child || child.exitCode !== null || child.signalCode !== null) return;
        run.probeTimer = setTimeout(tick, probe.periodSeconds * 1000);
        if (run.probing) return;
        run.probing = true;
        void runProbe(target, probe.timeoutSeconds * 1000).then((ok) => {
          run.probing = false;
          if (run.child !== child || child.exitCode !== null || child.signalCode !== null) return;
          const next = nextProbeState(run.probeState, ok, probe);
          const changed = next.ready !== run.probeState.ready;
          run.probeState = next;
          if (changed) {
            this.setReady(run, next.ready);
            this.writeStatus(run, 'Running');
          }
        });
      };
      run.probeTimer = setTimeout(tick, probe.initialDelaySeconds * 1000);
    }
  }

  /** The account's token; none when it has no ServiceAccount object (kubesim creates no "default"). */
  private tokenFor(namespace: string, account: string): string | undefined {
    try {
      return this.serviceAccountToken?.(namespace, account);
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
    const exitCode = code ?? 128 + signalNumber(signal);
    const current = this.store.get(this.resource, `${run.namespace}/${run.name}`);
    const spec = rec(current?.['spec']);
    const first = rec(Array.isArray(spec['containers']) ? spec['containers'][0] : undefined);
    if (!message && exitCode !== 0 && first['terminationMessagePolicy'] === 'FallbackToLogsOnError')
      message = run.logTail.trimEnd() || undefined;
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
      void this.remove(run.namespace, run.name, run.uid);
      return;
    }
    const policy = spec['restartPolicy'] ?? 'Always';
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
      const current = this.store.get(this.resource, `${run.namespace}/${run.name}`);
      if (this.stopped || run.terminating || !current || current.metadata.uid !== run.uid) return;
      run.restartCount++;
      this.launch(run, current);
    }, delay);
  }

  /** SIGTERM now (once), SIGKILL when the grace period is over; a shorter grace moves SIGKILL closer. */
  private terminate(run: RunningPod, graceSeconds: number): void {
    clearTimeout(run.restartTimer);
    const child = run.child;
    const running = child && child.exitCode === null && child.signalCode === null;
    if (!running) {
      run.terminating = true;
      void this.remove(run.namespace, run.name, run.uid);
      return;
    }
    const killAt = Date.now() + graceSeconds * 1000;
    if (!run.terminating) {
      run.terminating = true;
      this.log.debug({ pod: `${run.namespace}/${run.name}`, graceSeconds }, 'kubesim pod terminating');
      if (graceSeconds > 0) child.kill('SIGTERM');
    }
    if (run.killAtMs !== undefined && run.killAtMs <= killAt) return;
    run.killAtMs = killAt;
    clearTimeout(run.killTimer);
    run.killTimer = setTimeout(() => child.kill('SIGKILL'), Math.max(0, killAt - Date.now()));
  }

  /** The process has exited: the Pod object goes (uid precondition: never a successor's). */
  private async remove(namespace: string, name: string, uid: string): Promise<void> {
    const run = this.pods.get(uid);
    this.pods.delete(uid);
    if (run) {
      clearTimeout(run.probeTimer);
      clearTimeout(run.killTimer);
      clearTimeout(run.restartTimer);
      this.ips.release(run.podIP);
    }
    try {
      this.handlers.delete(this.podsDef, namespace, name, { gracePeriodSeconds: 0, preconditions: { uid } });
    } catch {
      // Already gone (force delete, namespace cascade) or replaced: nothing to remove.
    }
  }

  private writeStatus(run: RunningPod, phase: 'Pending' | 'Running' | 'Succeeded' | 'Failed'): void {
    if (this.stopped || run.gone) return;
    const pod = this.store.get(this.resource, `${run.namespace}/${run.name}`);
    if (!pod || pod.metadata.uid !== run.uid) return;
    const ready = run.readySinceMs !== undefined && 'running' in run.state;
    const status = podStatus(
      {
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
      },
      pod['status'],
      run.readySinceMs && ready ? run.readySinceMs : Date.now(),
    );
    const { resourceVersion: _rv, ...meta } = pod.metadata;
    try {
      this.handlers.update(
        this.status,
        run.namespace,
        run.name,
        { value: { ...pod, metadata: meta, status }, duplicates: [] },
        {},
      );
    } catch (err) {
      this.log.debug(
        { pod: `${run.namespace}/${run.name}`, err: String(err) },
        'kubesim pod status not written',
      );
    }
  }

  /** The container's env as the kubelet resolves it, or the reason it cannot start yet. */
  private resolveEnv(
    pod: KubeObject,
    container: Rec,
    podIP: string,
  ): { env: Record<string, string> } | { error: string } {
    const env: Record<string, string> = {};
    const namespace = pod.metadata.namespace ?? '';
    for (const e of Array.isArray(container['env']) ? container['env'] : []) {
      const item = rec(e);
      const name = item['name'];
      if (typeof name !== 'string') continue;
      if (typeof item['value'] === 'string') {
        env[name] = item['value'].replace(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (m, v: string) => env[v] ?? m);
        continue;
      }
      const from = rec(item['valueFrom']);
      const field = this.fieldRef(pod, from, namespace, podIP);
      if (field !== undefined) {
        env[name] = field;
        continue;
      }
      const ref = keyRef(this.lookup, namespace, from);
      if (ref && 'error' in ref) return { error: ref.error };
      if (ref) env[name] = ref.value;
      else if (Object.keys(from).length)
        this.log.warn(
          { pod: `${namespace}/${pod.metadata.name}`, env: name },
          'kubesim pod env reference not resolved',
        );
    }
    return { env };
  }

  private readonly lookup: Lookup = (plural, namespace, name) =>
    this.store.get(`/${plural}`, `${namespace}/${name}`);

  private fieldRef(pod: KubeObject, from: Rec, namespace: string, podIP: string): string | undefined {
    const fieldPath = rec(from['fieldRef'])['fieldPath'];
    if (typeof fieldPath !== 'string') return undefined;
    const spec = rec(pod['spec']);
    const m = /^metadata\.(labels|annotations)\['(.+)'\]$/.exec(fieldPath);
    if (m) return rec(pod.metadata[m[1] ?? ''])[m[2] ?? ''] as string | undefined;
    const fields: Record<string, string | undefined> = {
      'metadata.name': pod.metadata.name,
      'metadata.namespace': namespace,
      'metadata.uid': pod.metadata.uid,
      'spec.nodeName': KUBESIM_NODE,
      'spec.serviceAccountName':
        typeof spec['serviceAccountName'] === 'string' ? spec['serviceAccountName'] : 'default',
      'status.podIP': podIP,
      'status.hostIP': '127.0.0.1',
    };
    return fields[fieldPath];
  }
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
