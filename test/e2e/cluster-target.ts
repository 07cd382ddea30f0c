import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import selfsigned from 'selfsigned';
import { exec, mustExec, spawnUntil, waitFor } from './exec.js';
import type { ChartValues, E2eTarget } from './target.js';

/**
 * The scenario's target on a real cluster run in containers (kind, or k3s through testcontainers):
 * builds the image (or takes E2E_IMAGE), loads it into the cluster, runs the mock management API
 * (with its binding ingress over TLS) and an echo upstream in the cluster, and installs the chart
 * with the real helm. What differs per cluster is a ClusterProvider.
 */

const MOCK_NS = 'e2e-mock';
const API_KEY = 'e2e-api-key-0123456789';
const AUTHTOKEN = 'e2e-authtoken-0123456789';
const RELEASE = 'eb';
const NAMESPACE = 'endpoint-binder';
const APP_NAMESPACES = ['apps', 'other'];

/** The host tools the run drives. */
export interface ClusterTools {
  docker: string;
  kubectl: string;
  helm: string;
}

/** One cluster: started (or found) by `start`, which returns its kubeconfig file and the rest. */
export interface ClusterProvider {
  /** For test titles: `kind cluster x`, `k3s rancher/k3s:v…`. */
  name: string;
  /** Makes the image (already built on the host) pullable inside the cluster. */
  loadImage(image: string): Promise<void>;
  /** The cluster's kubeconfig file. */
  kubeconfig: string;
  /** Removes what `start` created (kept when E2E_KEEP_CLUSTER=1). */
  close(): Promise<void>;
}

/** What the container runs need on the host, or why they cannot run here. */
export async function dockerPreflight(): Promise<{ docker: string } | { skip: string }> {
  const docker = process.env['DOCKER'] ?? 'docker';
  const info = await exec(docker, ['info', '--format', '{{.ServerVersion}}'], { timeoutMs: 20_000 }).catch(
    (err: Error) => ({ code: 127, stdout: '', stderr: err.message }),
  );
  if (info.code !== 0 || !info.stdout.trim()) {
    return { skip: `no Docker engine (docker info: ${(info.stderr || info.stdout).trim().split('\n')[0]})` };
  }
  return { docker };
}

function mockManifests(image: string, cert: string, key: string): string {
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  const restricted = {
    securityContext: {
      runAsNonRoot: true,
      runAsUser: 65532,
      seccompProfile: { type: 'RuntimeDefault' },
    },
  };
  const container = {
    allowPrivilegeEscalation: false,
    readOnlyRootFilesystem: true,
    capabilities: { drop: ['ALL'] },
  };
  const docs: unknown[] = [
    ...[MOCK_NS, ...APP_NAMESPACES].map((name) => ({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name },
    })),
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'ingress-tls', namespace: MOCK_NS },
      type: 'kubernetes.io/tls',
      data: { 'tls.crt': b64(cert), 'tls.key': b64(key) },
    },
    deployment('mock-api', image, {
      args: [
        'mock-api',
        '--host',
        '0.0.0.0',
        '--port',
        '8080',
        '--api-key',
        API_KEY,
        '--authtoken',
        AUTHTOKEN,
        '--ingress-port',
        '9443',
        '--ingress-host',
        '0.0.0.0',
        '--ingress-cert',
        '/tls/tls.crt',
        '--ingress-key',
        '/tls/tls.key',
        '--ingress-advertise',
        `mock-api.${MOCK_NS}.svc:9443`,
      ],
      volumeMounts: [
        { name: 'tls', mountPath: '/tls', readOnly: true },
        { name: 'tmp', mountPath: '/tmp' },
      ],
      securityContext: container,
      readinessProbe: { tcpSocket: { port: 8080 }, periodSeconds: 2 },
    }),
    deployment('echo', image, {
      // The upstream: every byte back, half-close respected.
      command: ['node', '-e', "require('net').createServer({allowHalfOpen:true},s=>s.pipe(s)).listen(7000)"],
      volumeMounts: [{ name: 'tmp', mountPath: '/tmp' }],
      securityContext: container,
      readinessProbe: { tcpSocket: { port: 7000 }, periodSeconds: 2 },
    }),
    service('mock-api', [
      { name: 'api', port: 8080 },
      { name: 'ingress', port: 9443 },
    ]),
    service('echo', [{ name: 'tcp', port: 7000 }]),
  ];
  return docs.map((d) => JSON.stringify(d)).join('\n---\n');

  function deployment(name: string, img: string, c: Record<string, unknown>): unknown {
    return {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name, namespace: MOCK_NS },
      spec: {
        selector: { matchLabels: { app: name } },
        template: {
          metadata: { labels: { app: name } },
          spec: {
            ...restricted,
            containers: [{ name, image: img, imagePullPolicy: 'IfNotPresent', ...c }],
            volumes: [
              { name: 'tmp', emptyDir: {} },
              ...(name === 'mock-api' ? [{ name: 'tls', secret: { secretName: 'ingress-tls' } }] : []),
            ],
          },
        },
      },
    };
  }
  function service(name: string, ports: { name: string; port: number }[]): unknown {
    return {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name, namespace: MOCK_NS },
      spec: { selector: { app: name }, ports: ports.map((p) => ({ ...p, targetPort: p.port })) },
    };
  }
}

/** Script a client pod runs: connect, send, half-close, print what came back between markers. */
const CLIENT_SCRIPT = `
const [host, port, data] = process.argv.slice(1);
const s = require('net').connect({ host, port: Number(port), allowHalfOpen: true });
const chunks = [];
s.setTimeout(20000, () => { console.log('TIMEOUT'); process.exit(2); });
s.on('connect', () => s.end(data));
s.on('data', (c) => chunks.push(c));
s.on('error', (e) => { console.log('ERROR ' + e.message); process.exit(3); });
s.on('end', () => { console.log('<<' + Buffer.concat(chunks).toString('base64') + '>>'); process.exit(0); });
`;

export async function startClusterTarget(
  tools: ClusterTools,
  startCluster: (work: string) => Promise<ClusterProvider>,
): Promise<E2eTarget> {
  const work = mkdtempSync(join(tmpdir(), 'eb-e2e-'));
  const repo = resolve('.');
  let provider: ClusterProvider | undefined;
  let portForward: ChildProcess | undefined;
  const close = async (): Promise<void> => {
    portForward?.kill();
    await provider?.close();
    rmSync(work, { recursive: true, force: true });
  };

  try {
    const cluster = await startCluster(work);
    provider = cluster;
    const kubeconfig = cluster.kubeconfig;
    const kubectl = (args: string[], opts: { input?: string; timeoutMs?: number } = {}) =>
      mustExec(tools.kubectl, ['--kubeconfig', kubeconfig, ...args], opts);
    const helm = (args: string[]) =>
      mustExec(tools.helm, ['--kubeconfig', kubeconfig, ...args], { timeoutMs: 15 * 60_000 });
    let image = process.env['E2E_IMAGE'];
    if (!image) {
      image = 'endpoint-binder:e2e';
      await mustExec(tools.docker, ['build', '-t', image, repo], { timeoutMs: 20 * 60_000 });
    }
    await cluster.loadImage(image);
    const [repository, tag] = image.split(/:(?=[^:/]+$)/) as [string, string | undefined];

    // The ingress certificate names the Service the mock advertises; it is its own CA.
    const pems = await selfsigned.generate([{ name: 'commonName', value: `mock-api.${MOCK_NS}.svc` }], {
      keyType: 'ec',
      curve: 'P-256',
      algorithm: 'sha256',
      notAfterDate: new Date(Date.now() + 2 * 24 * 3600 * 1000),
      extensions: [
        { name: 'basicConstraints', cA: false },
        { name: 'extKeyUsage', serverAuth: true },
        {
          name: 'subjectAltName',
          altNames: [
            { type: 2, value: `mock-api.${MOCK_NS}.svc` },
            { type: 2, value: `mock-api.${MOCK_NS}.svc.cluster.local` },
          ],
        },
      ],
    });
    await kubectl(['apply', '-f', '-'], { input: mockManifests(image, pems.cert, pems.private) });
    for (const d of ['mock-api', 'echo']) {
      await kubectl(['-n', MOCK_NS, 'rollout', 'status', `deployment/${d}`, '--timeout=300s'], {
        timeoutMs: 320_000,
      });
    }
    const pf = await spawnUntil(
      tools.kubectl,
      ['--kubeconfig', kubeconfig, '-n', MOCK_NS, 'port-forward', 'svc/mock-api', ':8080'],
      /Forwarding from 127\.0\.0\.1:(\d+)/,
    );
    portForward = pf.child;
    const apiUrl = `http://127.0.0.1:${pf.match[1]}`;

    const baseValues: ChartValues = {
      image: { repository, tag: tag ?? 'latest', pullPolicy: 'IfNotPresent' },
      api: { baseUrl: `http://mock-api.${MOCK_NS}.svc:8080` },
      credentials: { apiKey: API_KEY, authtoken: AUTHTOKEN },
      bindings: { ingress: { caBundle: pems.cert } },
    };
    const valuesFile = (values: ChartValues): string => {
      const file = join(work, `values-${Date.now()}.yaml`);
      writeFileSync(file, JSON.stringify(values));
      return file;
    };
    const chart = join(repo, 'charts', 'endpoint-binder');
    const install = async (values: ChartValues): Promise<void> => {
      await helm([
        'install',
        RELEASE,
        chart,
        '-n',
        NAMESPACE,
        '--create-namespace',
        '-f',
        valuesFile(values),
        '--wait',
        '--timeout',
        '8m',
      ]);
    };
    let clientPods = 0;

    return {
      name: cluster.name,
      release: RELEASE,
      namespace: NAMESPACE,
      api: { baseUrl: apiUrl, apiKey: API_KEY },
      echoUpstream: `tcp://echo.${MOCK_NS}.svc:7000`,
      baseValues,
      appNamespaces: APP_NAMESPACES,
      kubeConfig() {
        const kc = new KubeConfig();
        kc.loadFromFile(kubeconfig);
        return kc;
      },
      install,
      async upgrade(values) {
        await helm([
          'upgrade',
          RELEASE,
          chart,
          '-n',
          NAMESPACE,
          '-f',
          valuesFile(values),
          '--wait',
          '--timeout',
          '8m',
        ]);
      },
      async uninstall() {
        await helm(['uninstall', RELEASE, '-n', NAMESPACE, '--wait', '--timeout', '8m']);
      },
      async deletePod(name) {
        await kubectl(['-n', NAMESPACE, 'delete', 'pod', name, '--wait=true'], { timeoutMs: 120_000 });
      },
      async exchange(host, port, data) {
        const pod = `e2e-client-${++clientPods}`;
        const ns = APP_NAMESPACES[0]!;
        await kubectl([
          '-n',
          ns,
          'run',
          pod,
          `--image=${image}`,
          '--image-pull-policy=IfNotPresent',
          '--restart=Never',
          '--command',
          '--',
          'node',
          '-e',
          CLIENT_SCRIPT,
          host,
          String(port),
          data,
        ]);
        try {
          await waitFor(
            `client pod ${pod} to finish`,
            async () => {
              const phase = await kubectl(['-n', ns, 'get', 'pod', pod, '-o', 'jsonpath={.status.phase}']);
              return phase === 'Succeeded' || phase === 'Failed' ? phase : undefined;
            },
            { timeoutMs: 120_000 },
          );
          const logs = await kubectl(['-n', ns, 'logs', pod]);
          const m = /<<([A-Za-z0-9+/=]*)>>/.exec(logs);
          if (!m) throw new Error(`client pod ${pod}: ${logs.trim()}`);
          return Buffer.from(m[1]!, 'base64').toString();
        } finally {
          await exec(tools.kubectl, [
            '--kubeconfig',
            kubeconfig,
            '-n',
            ns,
            'delete',
            'pod',
            pod,
            '--wait=false',
          ]);
        }
      },
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}
