import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { AppsV1Api, CoreV1Api, RbacAuthorizationV1Api, type V1Job } from '@kubernetes/client-node';
import { z } from 'zod';
import { startKubesim, type Kubesim, type RbacObjects } from '../../src/kubesim/index.js';
import type { KubeObject } from '../../src/kubesim/types.js';
import { startTestMock, type TestMock } from '../helpers/mock-api.js';
import { k8sTool } from '../helpers/k8s-tools.js';
import { exec, waitFor } from './exec.js';
import { playHookJobs, type HookRun } from './kubesim-jobs.js';
import { podName, podTemplateSchema, runPod, templateHash, type PodProcess } from './kubesim-pods.js';
import { exchangeThroughAlias, localProcessValues, loopbackArgs } from './local-process.js';
import type { ChartValues, E2eTarget } from './target.js';

/**
 * The scenario's target inside `npm test`: kubesim (TLS, so helm and kubectl send tokens) takes
 * a real `helm install/upgrade/uninstall` of the chart; the test plays the kubelet and the Job
 * controller. After every helm command the stored Deployments are "rolled out" as local
 * processes (kubesim-pods.ts) with their ServiceAccounts' tokens, so every Kubernetes call the
 * components make is authorized by kubesim from the RBAC objects helm created. The pre-delete
 * hook Job is run as a local `endpoint-binder uninstall` process while helm waits for it, and
 * then marked Complete through `jobs/status`, as the Job controller would. Pre-install and
 * pre-upgrade hooks (the config check) and post-upgrade hooks (the bindings-off cleanup, run once
 * the new Deployments are rolled out) are played the same way.
 */

const RELEASE = 'eb';
const NAMESPACE = 'endpoint-binder';
const APP_NAMESPACES = ['apps', 'other'];

export interface KubesimTarget extends E2eTarget {
  readonly sim: Kubesim;
  /** The install's RBAC objects as helm stored them, from the first install. */
  readonly rbac: () => RbacObjects | undefined;
  /** Pods that exited while their Deployment still wanted them, with their last output. */
  readonly crashes: () => string[];
  /** Every hook Job run so far, with its exit code and output. */
  readonly hookRuns: () => HookRun[];
  /** An upgrade that may be refused: helm's error instead of a throw. */
  tryUpgrade(values: ChartValues): Promise<{ ok: boolean; error: string }>;
  /** An install that may be refused: helm's error instead of a throw. */
  tryInstall(values: ChartValues): Promise<{ ok: boolean; error: string }>;
  /** `helm upgrade --install`: what docs/install.md says after a refused install; helm's output. */
  upgradeInstall(values: ChartValues): Promise<string>;
}

const deploymentListSchema = z.object({
  items: z.array(
    z.object({
      metadata: z.object({ name: z.string() }),
      spec: z.object({ replicas: z.number().int().default(1), template: z.unknown() }),
    }),
  ),
});

export async function startKubesimTarget(): Promise<KubesimTarget> {
  const helmTool = k8sTool('helm');
  if ('skip' in helmTool) throw new Error(helmTool.skip);
  const work = mkdtempSync(join(tmpdir(), 'eb-kubesim-e2e-'));
  const sim = await startKubesim({
    tls: true,
    initialNamespaces: ['default', 'kube-system', ...APP_NAMESPACES],
  });
  const kubeconfig = join(work, 'admin.kubeconfig');
  await sim.writeKubeconfig(kubeconfig);
  let mock: TestMock | undefined;
  let echo: Server | undefined;
  const pods = new Map<string, { hash: string; pods: PodProcess[] }>();
  const crashes: string[] = [];
  let rbac: RbacObjects | undefined;

  const stopPod = async (p: PodProcess): Promise<void> => {
    await p.stop();
    // E2E_KEEP_LOGS=<dir> keeps every pod's output for a post-mortem.
    const keep = process.env['E2E_KEEP_LOGS'];
    if (keep) writeFileSync(join(keep, `${p.name}.log`), p.output());
  };
  const stopPods = async (owner: string): Promise<void> => {
    const cur = pods.get(owner);
    pods.delete(owner);
    await Promise.all(cur?.pods.map(stopPod) ?? []);
  };
  const close = async (): Promise<void> => {
    for (const owner of [...pods.keys()]) await stopPods(owner);
    await mock?.close();
    await new Promise<void>((r) => (echo ? echo.close(() => r()) : r()));
    await sim.stop();
    rmSync(work, { recursive: true, force: true });
  };

  try {
    mock = await startTestMock({ ingress: { host: '127.0.0.1' } });
    // The upstream: every byte back, half-close respected.
    echo = createServer({ allowHalfOpen: true }, (s) => {
      s.on('error', () => s.destroy());
      s.pipe(s);
    });
    await new Promise<void>((r) => echo!.listen(0, '127.0.0.1', r));
    const echoPort = (echo.address() as AddressInfo).port;

    const kc = sim.kubeConfig();
    const core = kc.makeApiClient(CoreV1Api);
    const apps = kc.makeApiClient(AppsV1Api);
    const rbacApi = kc.makeApiClient(RbacAuthorizationV1Api);

    // A port window of its own: above test/system/data-path.test.ts's (20000-29999) and below
    // the kernel's ephemeral ports (32768+), where another test's socket could hold a port.
    const base = 30_000 + Math.floor(Math.random() * 10) * 250;
    const baseValues = localProcessValues(mock.url, mock.key, base);

    const helmEnv = {
      PATH: process.env['PATH'] ?? '',
      HOME: work,
      HELM_CACHE_HOME: join(work, 'helm-cache'),
    };
    const helm = async (args: string[]): Promise<string> => {
      const r = await exec(helmTool.path, ['--kubeconfig', kubeconfig, ...args], {
        timeoutMs: 5 * 60_000,
        env: helmEnv,
      });
      if (r.code !== 0) throw new Error(`helm ${args.join(' ')} exited ${r.code}:\n${r.stderr || r.stdout}`);
      return r.stdout;
    };
    const valuesFile = (values: ChartValues): string => {
      const file = join(work, `values-${Date.now()}.json`);
      writeFileSync(file, JSON.stringify(values));
      return file;
    };
    const chart = resolve('charts/endpoint-binder');

    /** The Deployment controller and kubelet in one: stored Deployments become running processes. */
    const rollOut = async (): Promise<void> => {
      const list = deploymentListSchema.parse(await apps.listNamespacedDeployment({ namespace: NAMESPACE }));
      for (const d of list.items) {
        const owner = d.metadata.name;
        const hash = templateHash({ template: d.spec.template, replicas: d.spec.replicas });
        // Recreate on a template change: the forwarder's ports are host ports here, old and new
        // cannot overlap. Otherwise top up to the replica count (a deleted pod is replaced).
        if (pods.get(owner)?.hash !== hash) {
          await stopPods(owner);
          pods.set(owner, { hash, pods: [] });
        }
        const set = pods.get(owner)!;
        const template = podTemplateSchema.parse(d.spec.template);
        while (set.pods.length < d.spec.replicas) {
          const pod = await runPod(sim, {
            namespace: NAMESPACE,
            name: podName(owner, hash),
            template,
            workDir: work,
            loopbackArgs,
          });
          set.pods.push(pod);
          void pod.exited.then((code) => {
            if (pods.get(owner)?.pods.includes(pod))
              crashes.push(`${pod.name} exited ${code}:\n${pod.output().slice(-4000)}`);
          });
          // Replicas start one after another, each once the previous one is up (for a controller:
          // registered). Started together, two controller replicas race to register the operator
          // (list, then create) and can create two records: a known race, reported, that this
          // e2e run is not the place to trip over at random.
          await started(pod);
        }
      }
      for (const owner of [...pods.keys()])
        if (!list.items.some((d) => d.metadata.name === owner)) await stopPods(owner);
    };
    const started = (p: PodProcess) =>
      waitFor(
        `${p.name} to start`,
        async () => {
          if (p.child.exitCode !== null)
            throw new Error(`exited ${p.child.exitCode}: ${p.output().slice(-2000)}`);
          return /"msg":"(operator registered|forwarder started)"/.test(p.output()) ? true : undefined;
        },
        { timeoutMs: 120_000, intervalMs: 100 },
      );

    const snapshotRbac = async (): Promise<void> => {
      if (rbac) return;
      const mine = { labelSelector: `app.kubernetes.io/instance=${RELEASE}` };
      const items = (l: { items: unknown[] }) => l.items as KubeObject[];
      rbac = {
        roles: items(await rbacApi.listNamespacedRole({ namespace: NAMESPACE, ...mine })),
        clusterRoles: items(await rbacApi.listClusterRole(mine)),
        roleBindings: items(await rbacApi.listNamespacedRoleBinding({ namespace: NAMESPACE, ...mine })),
        clusterRoleBindings: items(await rbacApi.listClusterRoleBinding(mine)),
      };
    };

    /**
     * The uninstall hook's RBAC exists only while the hook runs (hook resources): added to the
     * snapshot when helm has created them, so the run proves those rules too.
     */
    const snapshotHookRbac = async (): Promise<void> => {
      if (!rbac) return;
      const mine = { labelSelector: `app.kubernetes.io/instance=${RELEASE}` };
      const isHook = (o: KubeObject) => o.metadata.annotations?.['helm.sh/hook'] === 'pre-delete';
      const add = (have: readonly KubeObject[], more: { items: unknown[] }): KubeObject[] => {
        const names = new Set(have.map((o) => o.metadata.name));
        return [
          ...have,
          ...(more.items as KubeObject[]).filter((o) => isHook(o) && !names.has(o.metadata.name)),
        ];
      };
      rbac = {
        roles: add(rbac.roles, await rbacApi.listNamespacedRole({ namespace: NAMESPACE, ...mine })),
        clusterRoles: add(rbac.clusterRoles, await rbacApi.listClusterRole(mine)),
        roleBindings: add(
          rbac.roleBindings,
          await rbacApi.listNamespacedRoleBinding({ namespace: NAMESPACE, ...mine }),
        ),
        clusterRoleBindings: add(rbac.clusterRoleBindings, await rbacApi.listClusterRoleBinding(mine)),
      };
    };

    const hookRuns: HookRun[] = [];
    /** The Job controller and kubelet for one phase's hook Jobs while a helm command runs. */
    const withHooks = async <T>(phase: string | readonly string[], command: Promise<T>): Promise<T> => {
      let finished = false;
      const run = command.finally(() => {
        finished = true;
      });
      const [result] = await Promise.all([
        run,
        playHookJobs({
          sim,
          namespace: NAMESPACE,
          phase,
          workDir: work,
          loopbackArgs,
          done: () => finished,
          onRun: (r) => hookRuns.push(r),
          // Helm deletes the Deployments and the RBAC objects together once the pre-delete hook
          // is Complete; on a cluster the pods then terminate while their Roles may already be
          // gone (a 403 while shutting down). Here the pods stop first, so a 403 in the audit
          // always means a missing rule.
          ...(phase === 'pre-delete'
            ? {
                beforeRun: snapshotHookRbac,
                beforeStatus: async (pod: PodProcess) => {
                  for (const owner of [...pods.keys()]) await stopPods(owner);
                  if ((await pod.exited) !== 0)
                    crashes.push(
                      `hook ${pod.name} exited ${pod.child.exitCode}:\n${pod.output().slice(-4000)}`,
                    );
                },
              }
            : phase.includes('post-upgrade')
              ? {
                  // Post-upgrade hooks run once helm has applied the new objects: by then the
                  // Deployment controller has started replacing the pods.
                  beforeRun: async (job: V1Job) => {
                    // A failed roll-out is reported (crashes) while helm's hook still runs, so
                    // helm is not left waiting behind a test that already gave up.
                    if ((job.metadata?.annotations?.['helm.sh/hook'] ?? '').includes('post-upgrade'))
                      await rollOut().catch((err: unknown) =>
                        crashes.push(`roll-out before ${job.metadata?.name}: ${String(err)}`),
                      );
                  },
                }
              : {}),
        }),
      ]);
      return result;
    };

    const target: KubesimTarget = {
      name: 'kubesim with local processes',
      release: RELEASE,
      namespace: NAMESPACE,
      api: { baseUrl: mock.url, apiKey: mock.key },
      echoUpstream: `tcp://127.0.0.1:${echoPort}`,
      baseValues,
      appNamespaces: APP_NAMESPACES,
      sim,
      rbac: () => rbac,
      crashes: () => [...crashes],
      kubeConfig: () => sim.kubeConfig(),
      hookRuns: () => [...hookRuns],
      async install(values) {
        await withHooks(
          'pre-install',
          helm(['install', RELEASE, chart, '-n', NAMESPACE, '--create-namespace', '-f', valuesFile(values)]),
        );
        await snapshotRbac();
        await rollOut();
      },
      async upgrade(values) {
        await withHooks(
          ['pre-upgrade', 'post-upgrade'],
          helm(['upgrade', RELEASE, chart, '-n', NAMESPACE, '-f', valuesFile(values)]),
        );
        await rollOut();
      },
      async tryInstall(values) {
        try {
          await target.install(values);
          return { ok: true, error: '' };
        } catch (err) {
          return { ok: false, error: err instanceof Error ? err.message : String(err) };
        }
      },
      async upgradeInstall(values) {
        const out = await withHooks(
          ['pre-install', 'pre-upgrade', 'post-upgrade'],
          helm(['upgrade', '--install', RELEASE, chart, '-n', NAMESPACE, '-f', valuesFile(values)]),
        );
        await snapshotRbac();
        await rollOut();
        return out;
      },
      async tryUpgrade(values) {
        try {
          await target.upgrade(values);
          return { ok: true, error: '' };
        } catch (err) {
          return { ok: false, error: err instanceof Error ? err.message : String(err) };
        }
      },
      async uninstall() {
        await withHooks(
          'pre-delete',
          helm(['uninstall', RELEASE, '-n', NAMESPACE, '--wait', '--timeout', '4m']),
        );
        await rollOut();
      },
      async deletePod(name) {
        for (const [owner, set] of pods) {
          const pod = set.pods.find((p) => p.name === name);
          if (!pod) continue;
          set.pods = set.pods.filter((p) => p !== pod);
          pods.set(owner, set);
          await stopPod(pod);
          // The ReplicaSet replaces a deleted pod: a new process from the same template.
          await rollOut();
          return;
        }
        throw new Error(`no pod ${name}`);
      },
      exchange: (host, port, data) => exchangeThroughAlias(core, host, port, data),
      close,
    };
    return target;
  } catch (err) {
    await close();
    throw err;
  }
}
