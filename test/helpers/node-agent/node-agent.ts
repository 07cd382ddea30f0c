import type { ChildProcess } from 'node:child_process';
import {
  CoreV1Api,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
  type V1Pod,
} from '@kubernetes/client-node';
import { freePort } from '../../../bench/support/load.js';
import { podStatus, rfc3339, type ContainerState } from '../../../src/kubesim/workloads/pod-status.js';
import {
  initialProbeState,
  nextProbeState,
  probeSchema,
  probeTarget,
  runProbe,
  type Probe,
  type ProbeState,
  type ProbeTarget,
} from '../../../src/kubesim/workloads/probe.js';

/**
 * A node agent for any API server: it registers a Node, binds every unscheduled Pod to it (the
 * documented stand-in for kube-scheduler: one node, so there is nothing to choose), and runs each
 * Pod bound to it as a local process through the caller's runner, as a kubelet would: each named
 * container port gets a free loopback port (pods here share one network namespace), the
 * readinessProbe runs against it, the status (phase, podIP 127.0.0.1, Ready, container state)
 * is written through pods/status, a container that exits is restarted (restartPolicy Always) or
 * its pod ends Succeeded/Failed, and a Pod marked for deletion gets SIGTERM, SIGKILL after its
 * grace period, and is then removed (uid precondition). It polls: workloads here are a handful
 * of pods.
 */

export interface PodRunRequest {
  pod: V1Pod;
  /** Container port (by name and by number) → the loopback port it listens on here. */
  hostPorts: ReadonlyMap<string | number, number>;
}

export interface RunningProcess {
  child: ChildProcess;
  output(): string;
}

export type NodePodRunner = (req: PodRunRequest) => Promise<RunningProcess>;

interface Run {
  uid: string;
  namespace: string;
  name: string;
  proc?: RunningProcess;
  hostPorts?: ReadonlyMap<string | number, number>;
  state: ContainerState;
  restarts: number;
  startTime: string;
  probe?: Probe;
  target?: ProbeTarget;
  probeState: ProbeState;
  readySince?: number;
  timer?: NodeJS.Timeout;
  terminating: boolean;
}

export interface NodeAgent {
  readonly nodeName: string;
  /** Output of every pod process so far, by pod name (for failure messages). */
  outputs(): Record<string, string>;
  /** The process of a running pod's container (a test kills it as the OOM killer would). */
  pid(podName: string): number | undefined;
  /** Where a running pod's container port (by name or number) listens here. */
  hostPort(podName: string, port: string | number): number | undefined;
  stop(): Promise<void>;
}

export async function startNodeAgent(opts: {
  kubeConfig: KubeConfig;
  runner: NodePodRunner;
  nodeName?: string;
  /**
   * Only pods of these namespaces are bound and run (default: all). Agents of test files that
   * share one control plane must not run each other's pods: each has its own node and namespaces.
   */
  namespaces?: readonly string[];
  pollMs?: number;
  onLog?: (line: string) => void;
}): Promise<NodeAgent> {
  const nodeName = opts.nodeName ?? 'process-node';
  const core = opts.kubeConfig.makeApiClient(CoreV1Api);
  const log = opts.onLog ?? (() => {});
  const runs = new Map<string, Run>();
  const outputs: Record<string, string> = {};
  let stopped = false;

  await core
    .createNode({
      body: {
        metadata: { name: nodeName, labels: { 'kubernetes.io/hostname': nodeName } },
        spec: {},
      },
    })
    .catch((err: { code?: number }) => {
      if (err.code !== 409) throw err;
    });
  const now = rfc3339(Date.now());
  await core
    .patchNodeStatus(
      {
        name: nodeName,
        body: {
          status: {
            conditions: [
              {
                type: 'Ready',
                status: 'True',
                reason: 'KubeletReady',
                lastHeartbeatTime: now,
                lastTransitionTime: now,
              },
            ],
            addresses: [{ type: 'InternalIP', address: '127.0.0.1' }],
            capacity: { cpu: '2', memory: '24Gi', pods: '110' },
            allocatable: { cpu: '2', memory: '24Gi', pods: '110' },
          },
        },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    )
    .catch((err: unknown) => log(`node status: ${String(err)}`));

  const writeStatus = async (
    run: Run,
    phase: 'Pending' | 'Running' | 'Succeeded' | 'Failed',
  ): Promise<void> => {
    const ready = run.readySince !== undefined && 'running' in run.state;
    const status = podStatus(
      {
        phase,
        podIP: '127.0.0.1',
        startTime: run.startTime,
        containerName: 'main',
        ready,
        restartCount: run.restarts,
        state: run.state,
        ...(run.proc?.child.pid !== undefined ? { pid: run.proc.child.pid } : {}),
      },
      undefined,
      run.readySince ?? Date.now(),
    );
    try {
      const pod = await core.readNamespacedPod({ namespace: run.namespace, name: run.name });
      if (pod.metadata?.uid !== run.uid) return;
      const containers = pod.spec?.containers ?? [];
      const statuses = containers.map((c, i) => ({
        ...(status['containerStatuses'] as Record<string, unknown>[])[0],
        name: c.name,
        image: c.image ?? '',
        // Only the first container runs here; the others report what it does.
        ...(i > 0 ? { restartCount: 0 } : {}),
      }));
      await core.replaceNamespacedPodStatus({
        namespace: run.namespace,
        name: run.name,
        body: {
          ...pod,
          status: {
            ...(status as V1Pod['status']),
            // The API server set it at creation, from the resources; it is immutable.
            qosClass: pod.status?.qosClass ?? 'BestEffort',
            containerStatuses: statuses as never,
          },
        },
      });
    } catch (err) {
      const body = (err as { body?: unknown }).body;
      log(
        `status of ${run.namespace}/${run.name} not written: ${String(err)} ${typeof body === 'string' ? body : JSON.stringify(body)}`,
      );
    }
  };

  const remove = async (run: Run): Promise<void> => {
    runs.delete(run.uid);
    clearTimeout(run.timer);
    await core
      .deleteNamespacedPod({
        namespace: run.namespace,
        name: run.name,
        body: { gracePeriodSeconds: 0, preconditions: { uid: run.uid } },
      })
      .catch(() => undefined);
  };

  const launch = async (run: Run, pod: V1Pod): Promise<void> => {
    const container = pod.spec?.containers[0];
    const hostPorts = new Map<string | number, number>();
    for (const p of container?.ports ?? []) {
      const port = await freePort();
      hostPorts.set(p.containerPort, port);
      if (p.name) hostPorts.set(p.name, port);
    }
    run.hostPorts = hostPorts;
    try {
      run.proc = await opts.runner({ pod, hostPorts });
    } catch (err) {
      run.state = { waiting: { reason: 'RunContainerError', message: String(err) } };
      log(`${run.namespace}/${run.name}: ${String(err)}`);
      await writeStatus(run, 'Pending');
      return;
    }
    const proc = run.proc;
    outputs[run.name] = '';
    run.state = { running: { startedAt: rfc3339(Date.now()) } };
    run.probeState = initialProbeState;
    const raw = container?.readinessProbe;
    if (raw) {
      const parsed = probeSchema.safeParse(raw);
      const ports = [...hostPorts].flatMap(([k, v]) =>
        typeof k === 'string' ? [{ name: k, containerPort: v }] : [{ containerPort: v }],
      );
      // Probe ports name the container's ports: map a numeric one to its loopback port.
      const probe = parsed.success ? parsed.data : undefined;
      const handler = probe?.httpGet ?? probe?.tcpSocket;
      if (probe && handler && typeof handler.port === 'number' && hostPorts.has(handler.port))
        handler.port = hostPorts.get(handler.port)!;
      const target = probe ? probeTarget(probe, '127.0.0.1', ports) : undefined;
      if (probe && target && !('problem' in target)) {
        run.probe = probe;
        run.target = target;
      }
    }
    if (!run.probe) run.readySince = Date.now();
    await writeStatus(run, 'Running');
    proc.child.once('exit', (code, signal) => void onExit(run, proc, code, signal));
    if (run.probe && run.target) {
      const probe = run.probe;
      const target = run.target;
      const tick = async (): Promise<void> => {
        if (stopped || run.proc !== proc || proc.child.exitCode !== null) return;
        const ok = await runProbe(target, probe.timeoutSeconds * 1000);
        const next = nextProbeState(run.probeState, ok, probe);
        const changed = next.ready !== run.probeState.ready;
        run.probeState = next;
        if (changed) {
          if (next.ready) run.readySince = Date.now();
          else delete run.readySince;
          await writeStatus(run, 'Running');
        }
        // Faster than the pod asks (at most 1 s): tests wait on readiness.
        run.timer = setTimeout(() => void tick(), Math.min(1000, probe.periodSeconds * 1000));
      };
      run.timer = setTimeout(() => void tick(), 200);
    }
  };

  const onExit = async (
    run: Run,
    proc: RunningProcess,
    code: number | null,
    signal: NodeJS.Signals | null,
  ): Promise<void> => {
    if (run.proc !== proc) return;
    outputs[run.name] = proc.output();
    clearTimeout(run.timer);
    delete run.readySince;
    const exitCode = code ?? (signal === 'SIGKILL' ? 137 : 143);
    run.state = {
      terminated: {
        exitCode,
        reason: exitCode === 0 ? 'Completed' : 'Error',
        finishedAt: rfc3339(Date.now()),
      },
    };
    if (stopped) return;
    if (run.terminating) {
      await remove(run);
      return;
    }
    let pod: V1Pod | undefined;
    try {
      pod = await core.readNamespacedPod({ namespace: run.namespace, name: run.name });
    } catch {
      return;
    }
    const policy = pod.spec?.restartPolicy ?? 'Always';
    if (policy === 'Never' || (policy === 'OnFailure' && exitCode === 0)) {
      await writeStatus(run, exitCode === 0 ? 'Succeeded' : 'Failed');
      return;
    }
    run.state = { waiting: { reason: 'CrashLoopBackOff', message: `exit ${exitCode}` } };
    await writeStatus(run, 'Running');
    run.restarts++;
    run.timer = setTimeout(
      () => {
        if (!stopped && !run.terminating) void launch(run, pod);
      },
      Math.min(10_000, 1000 * 2 ** Math.min(run.restarts, 4)),
    );
  };

  const terminate = (run: Run, graceSeconds: number): void => {
    if (run.terminating) return;
    run.terminating = true;
    clearTimeout(run.timer);
    const child = run.proc?.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) {
      void remove(run);
      return;
    }
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), graceSeconds * 1000).unref();
  };

  const sync = async (): Promise<void> => {
    const pods = await core.listPodForAllNamespaces();
    const seen = new Set<string>();
    for (const pod of pods.items) {
      const uid = pod.metadata?.uid ?? '';
      const namespace = pod.metadata?.namespace ?? '';
      if (opts.namespaces && !opts.namespaces.includes(namespace)) continue;
      const name = pod.metadata?.name ?? '';
      seen.add(uid);
      if (!pod.spec?.nodeName) {
        if (pod.metadata?.deletionTimestamp) continue;
        await core
          .createNamespacedPodBinding({
            namespace,
            name,
            body: {
              metadata: { name, namespace },
              target: { apiVersion: 'v1', kind: 'Node', name: nodeName },
            },
          })
          .catch((err: unknown) => log(`bind ${namespace}/${name}: ${String(err)}`));
        continue;
      }
      if (pod.spec.nodeName !== nodeName) continue;
      let run = runs.get(uid);
      if (pod.metadata?.deletionTimestamp) {
        if (run) terminate(run, pod.metadata.deletionGracePeriodSeconds ?? 30);
        else if (!pod.status?.phase || pod.status.phase !== 'Running') {
          // Never started here, or finished: nothing to stop.
          await core
            .deleteNamespacedPod({ namespace, name, body: { gracePeriodSeconds: 0, preconditions: { uid } } })
            .catch(() => undefined);
        }
        continue;
      }
      if (run || pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed') continue;
      run = {
        uid,
        namespace,
        name,
        state: { waiting: { reason: 'ContainerCreating' } },
        restarts: 0,
        startTime: rfc3339(Date.now()),
        probeState: initialProbeState,
        terminating: false,
      };
      runs.set(uid, run);
      await launch(run, pod);
    }
    // Pods removed under us (force delete, namespace cascade): their processes stop.
    for (const run of runs.values()) if (!seen.has(run.uid)) terminate(run, 0);
  };

  const loop = (async () => {
    while (!stopped) {
      await sync().catch((err: unknown) => log(`sync: ${String(err)}`));
      await new Promise((r) => setTimeout(r, opts.pollMs ?? 300));
    }
  })();

  return {
    nodeName,
    pid(podName) {
      for (const run of runs.values())
        if (run.name === podName && run.proc?.child.exitCode === null) return run.proc.child.pid;
      return undefined;
    },
    hostPort(podName, port) {
      for (const run of runs.values()) if (run.name === podName) return run.hostPorts?.get(port);
      return undefined;
    },
    outputs() {
      for (const run of runs.values()) if (run.proc) outputs[run.name] = run.proc.output();
      return { ...outputs };
    },
    async stop() {
      stopped = true;
      await loop;
      const exits: Promise<void>[] = [];
      for (const run of runs.values()) {
        clearTimeout(run.timer);
        const child = run.proc?.child;
        if (!child || child.exitCode !== null || child.signalCode !== null) continue;
        exits.push(new Promise((r) => child.once('exit', () => r())));
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), 5000).unref();
      }
      await Promise.all(exits);
    },
  };
}
