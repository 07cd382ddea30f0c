import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import type { ControlPlaneClient } from '../helpers/control-plane/control-plane.js';
import { k8sTool } from '../helpers/k8s-tools.js';
import { startApiProxy, type ApiProxy } from '../helpers/api-proxy.js';
import { startTestMock, type TestMock } from '../helpers/mock-api.js';
import { createLogger } from '../../src/log/logger.js';
import { startNodeAgent, type NodeAgent } from '../../src/kubesim/workloads/node-agent.js';
import { exec } from './exec.js';
import { podTemplateSchema, runPod } from './kubesim-pods.js';
import { exchangeThroughAlias, localProcessValues, loopbackArgs, readyPodBackend } from './local-process.js';
import type { ChartValues, E2eTarget } from './target.js';

/**
 * The scenario's target on a real control plane (etcd, kube-apiserver, kube-controller-manager
 * built from their Go modules; test/helpers/control-plane): the real helm installs the chart, the
 * real API server enforces its RBAC and admission fence, the real Job, Deployment and ReplicaSet
 * controllers create the hook and workload Pods, and the process node agent (src/kubesim/workloads/node-agent.ts, the one
 * `kubesim --workloads` runs) binds
 * them to its node and runs each as a local `endpoint-binder` process with a TokenRequest token
 * of its ServiceAccount, each pod at its own loopback IP. Cluster DNS and kube-proxy are played by
 * `exchange`: the alias, the internal Service, a ready forwarder pod's IP.
 */

export interface RealTarget extends E2eTarget {
  readonly cluster: ControlPlaneClient;
  readonly agent: NodeAgent;
  /** The path from the controllers to the management API (api.baseUrl points at it). */
  readonly proxy: ApiProxy;
  readonly mock: TestMock;
}

export async function startRealTarget(
  cluster: ControlPlaneClient,
  opts: {
    release?: string;
    namespace?: string;
    appNamespaces?: string[];
    /** 0-7: which 250-port window of 22000-23999 the forwarder's ports come from (files in parallel differ). */
    portWindow?: number;
  } = {},
): Promise<RealTarget> {
  const helmTool = k8sTool('helm');
  if ('skip' in helmTool) throw new Error(helmTool.skip);
  const release = opts.release ?? 'eb';
  const namespace = opts.namespace ?? 'endpoint-binder';
  const appNamespaces = opts.appNamespaces ?? ['apps', 'other'];
  const work = mkdtempSync(join(tmpdir(), 'eb-real-e2e-'));
  const kubeconfig = join(work, 'admin.kubeconfig');
  cluster.writeKubeconfig(kubeconfig);
  const core = cluster.kubeConfig().makeApiClient(CoreV1Api);
  let mock: TestMock | undefined;
  let echo: Server | undefined;
  let agent: NodeAgent | undefined;
  let proxy: ApiProxy | undefined;
  const close = async (): Promise<void> => {
    await agent?.stop();
    await proxy?.close();
    await mock?.close();
    await new Promise<void>((r) => (echo ? echo.close(() => r()) : r()));
    if (process.env['E2E_KEEP_LOGS'] === undefined) rmSync(work, { recursive: true, force: true });
  };

  try {
    for (const ns of appNamespaces)
      await core.createNamespace({ body: { metadata: { name: ns } } }).catch((err: { code?: number }) => {
        if (err.code !== 409) throw err;
      });
    mock = await startTestMock({ ingress: { host: '127.0.0.1' } });
    proxy = await startApiProxy(mock.url);
    echo = createServer({ allowHalfOpen: true }, (s) => {
      s.on('error', () => s.destroy());
      s.pipe(s);
    });
    await new Promise<void>((r) => echo!.listen(0, '127.0.0.1', r));
    const echoPort = (echo.address() as AddressInfo).port;

    const agentLog: string[] = [];
    agent = await startNodeAgent({
      kubeConfig: cluster.kubeConfig(),
      // Its own node and namespace: other test files' targets share this control plane.
      nodeName: `process-node-${release}`,
      namespaces: [namespace],
      schedule: true,
      // Each pod gets its own loopback IP (127.0.x.y; Linux routes all of 127/8 to lo) and listens
      // on its container ports there, as in a cluster: the controller reads a forwarder at podIP:http.
      crashBackoff: { initialMs: 2000, maxMs: 10_000 },
      // Faster than the pods ask (at most 1 s): the tests wait on readiness.
      maxProbePeriodMs: 1000,
      log: createLogger({
        level: 'debug',
        destination: {
          write: (line: string) => {
            agentLog.push(line.trimEnd());
            if (process.env['E2E_AGENT_LOG'] === '1') console.log(`[node agent] ${line.trimEnd()}`);
          },
        },
      }),
      runner: async ({ pod, namespace, name, podIP, container }) => {
        const ports = new Map(container.ports.flatMap((p) => (p.name ? [[p.name, p.containerPort]] : [])));
        const p = await runPod(cluster, {
          namespace,
          name,
          template: podTemplateSchema.parse({ metadata: pod.metadata, spec: pod['spec'] }),
          workDir: work,
          loopbackArgs,
          place: { ip: podIP, ports },
        });
        return p.child;
      },
    });

    // A port window of its own, apart from the kubesim target's (30000-32499).
    const base = 22_000 + (opts.portWindow ?? Math.floor(Math.random() * 8)) * 250;
    const baseValues = localProcessValues(proxy.url, mock.key, base);
    const helmEnv = {
      PATH: process.env['PATH'] ?? '',
      HOME: work,
      HELM_CACHE_HOME: join(work, 'helm-cache'),
      HELM_CONFIG_HOME: join(work, 'helm-config'),
    };
    const helm = async (args: string[]): Promise<string> => {
      const r = await exec(helmTool.path, ['--kubeconfig', kubeconfig, ...args], {
        timeoutMs: 6 * 60_000,
        env: helmEnv,
      });
      if (r.code !== 0) {
        const pods = Object.entries(agent?.outputs() ?? {})
          .map(([name, out]) => `--- pod ${name} ---\n${out.slice(-1500)}`)
          .join('\n');
        const log = agentLog.slice(-20).join('\n');
        throw new Error(
          `helm ${args.join(' ')} exited ${r.code}:\n${r.stderr || r.stdout}\n${pods}\n--- node agent ---\n${log}`,
        );
      }
      return r.stdout;
    };
    const valuesFile = (values: ChartValues): string => {
      const file = join(work, `values-${Date.now()}.json`);
      writeFileSync(file, JSON.stringify(values));
      return file;
    };
    const chart = resolve('charts/endpoint-binder');
    const wait = ['--wait', '--timeout', '5m'];

    const target: RealTarget = {
      name: `kube-apiserver ${cluster.version}`,
      release,
      namespace,
      api: { baseUrl: mock.url, apiKey: mock.key },
      echoUpstream: `tcp://127.0.0.1:${echoPort}`,
      baseValues,
      appNamespaces,
      cluster,
      agent,
      proxy,
      mock,
      kubeConfig: () => cluster.kubeConfig(),
      async install(values) {
        await helm([
          'install',
          release,
          chart,
          '-n',
          namespace,
          '--create-namespace',
          '-f',
          valuesFile(values),
          ...wait,
        ]);
      },
      async upgrade(values) {
        await helm(['upgrade', release, chart, '-n', namespace, '-f', valuesFile(values), ...wait]);
      },
      async uninstall() {
        await helm(['uninstall', release, '-n', namespace, ...wait]);
      },
      async deletePod(name) {
        await core.deleteNamespacedPod({ namespace, name });
      },
      exchange: (host, port, data) => exchangeThroughAlias(core, host, port, data, readyPodBackend(core)),
      close,
    };
    return target;
  } catch (err) {
    await close();
    throw err;
  }
}
