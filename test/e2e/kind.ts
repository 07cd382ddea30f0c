import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import selfsigned from 'selfsigned';
import { k8sTool } from '../helpers/k8s-tools.js';
import { exec, mustExec, spawnUntil, waitFor } from './exec.js';
import type { ChartValues, E2eTarget } from './target.js';

/**
 * The scenario's target on a kind cluster: builds the image, loads it into kind, runs the mock
 * management API (with its binding ingress over TLS) and an echo upstream in the cluster, and
 * installs the chart with the real helm. Environment:
 *   KIND                       the kind binary (default: kind on PATH)
 *   E2E_KIND_CLUSTER           cluster name (default endpoint-binder-e2e); created unless it exists
 *   E2E_KEEP_CLUSTER=1         keep the cluster afterwards (it is deleted only if this run created it)
 *   E2E_IMAGE                  image to test (default: built from the Dockerfile as endpoint-binder:e2e)
 */

const MOCK_NS = 'e2e-mock';
const API_KEY = 'e2e-api-key-0123456789';
const AUTHTOKEN = 'e2e-authtoken-0123456789';
const RELEASE = 'eb';
const NAMESPACE = 'endpoint-binder';
const APP_NAMESPACES = ['apps', 'other'];

export interface KindTools {
  docker: string;
  kind: string;
  kubectl: string;
  helm: string;
}

/** What the kind run needs, or why it cannot run here. */
export async function kindPreflight(): Promise<{ tools: KindTools } | { skip: string }> {
  const kubectl = k8sTool('kubectl');
  if ('skip' in kubectl) return { skip: kubectl.skip };
  const helm = k8sTool('helm');
  if ('skip' in helm) return { skip: helm.skip };
  const docker = process.env['DOCKER'] ?? 'docker';
  const info = await exec(docker, ['info', '--format', '{{.ServerVersion}}'], { timeoutMs: 20_000 }).catch(
    (err: Error) => ({ code: 127, stdout: '', stderr: err.message }),
  );
  if (info.code !== 0 || !info.stdout.trim()) {
    return { skip: `no Docker engine (docker info: ${(info.stderr || info.stdout).trim().split('\n')[0]})` };
  }
  const kind = process.env['KIND'] ?? 'kind';
  const version = await exec(kind, ['version'], { timeoutMs: 20_000 }).catch((err: Error) => ({
    code: 127,
    stdout: '',
    stderr: err.message,
  }));
  if (version.code !== 0) {
    return {
      skip: `kind is not installed (${version.stderr.trim()}); see docs/install.md, "End-to-end tests"`,
    };
  }
  return { tools: { docker, kind, kubectl: kubectl.path, helm: helm.path } };
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

export async function startKindTarget(tools: KindTools): Promise<E2eTarget> {
  const work = mkdtempSync(join(tmpdir(), 'eb-e2e-'));
  const kubeconfig = join(work, 'kubeconfig');
  const cluster = process.env['E2E_KIND_CLUSTER'] ?? 'endpoint-binder-e2e';
  const repo = resolve('.');
  const kubectl = (args: string[], opts: { input?: string; timeoutMs?: number } = {}) =>
    mustExec(tools.kubectl, ['--kubeconfig', kubeconfig, ...args], opts);
  const helm = (args: string[]) =>
    mustExec(tools.helm, ['--kubeconfig', kubeconfig, ...args], { timeoutMs: 15 * 60_000 });

  const existing = (await mustExec(tools.kind, ['get', 'clusters'])).split('\n').map((l) => l.trim());
  const created = !existing.includes(cluster);
  if (created) {
    await mustExec(
      tools.kind,
      ['create', 'cluster', '--name', cluster, '--wait', '180s', '--kubeconfig', kubeconfig],
      {
        timeoutMs: 10 * 60_000,
      },
    );
  } else {
    await mustExec(tools.kind, ['export', 'kubeconfig', '--name', cluster, '--kubeconfig', kubeconfig]);
  }
  let portForward: ChildProcess | undefined;
  const close = async (): Promise<void> => {
    portForward?.kill();
    if (created && process.env['E2E_KEEP_CLUSTER'] !== '1') {
      await exec(tools.kind, ['delete', 'cluster', '--name', cluster], { timeoutMs: 5 * 60_000 });
    }
    rmSync(work, { recursive: true, force: true });
  };

  try {
    let image = process.env['E2E_IMAGE'];
    if (!image) {
      image = 'endpoint-binder:e2e';
      await mustExec(tools.docker, ['build', '-t', image, repo], { timeoutMs: 20 * 60_000 });
    }
    await mustExec(tools.kind, ['load', 'docker-image', image, '--name', cluster], {
      timeoutMs: 10 * 60_000,
    });
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
      name: `kind cluster ${cluster}`,
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
