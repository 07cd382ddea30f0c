import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { Agent, request } from 'undici';
import { z } from 'zod';
import { freePort, freePorts } from '../../../bench/support/load.js';
import { kubeconfigYaml } from '../../../src/kubesim/kubeconfig.js';
import type { ControlPlaneBinaries } from './binaries.js';
import { makePki } from './pki.js';
import { startProcess, startWatchdog, type ManagedProcess } from './processes.js';

/**
 * A real Kubernetes control plane as plain local processes, in the shape of controller-runtime's
 * envtest: etcd (no fsync), kube-apiserver (TLS from a fresh CA, RBAC authorization, static
 * tokens for an admin and named test users, ServiceAccount tokens from a fresh signing key, an
 * audit log of the writes that matter to us) and, unless `controllers: []`, kube-controller-manager
 * with the controllers a chart install and namespace lifecycle need. Everything listens on
 * 127.0.0.1 on ports the OS chose. `stop()` ends every process; a watchdog ends them if the test
 * process dies first.
 */

/** Kube-controller-manager's controllers by default: lifecycle, garbage collection, and workloads. */
export const DEFAULT_CONTROLLERS = [
  'namespace-controller',
  'garbage-collector-controller',
  'serviceaccount-controller',
  'root-ca-certificate-publisher-controller',
  'clusterrole-aggregation-controller',
  'deployment-controller',
  'replicaset-controller',
  'job-controller',
  // Type-checks ValidatingAdmissionPolicies into status.typeChecking (the fidelity suite reads it).
  'validatingadmissionpolicy-status-controller',
] as const;

/** The audit policy: every request on the kinds whose writes the tests count (no bodies). */
const AUDIT_POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  - level: Metadata
    resources:
      - group: ""
        resources: [services, configmaps, events, namespaces, pods]
      - group: coordination.k8s.io
        resources: [leases]
      - group: events.k8s.io
        resources: [events]
  - level: None
`;

export interface ControlPlaneOptions {
  bin: ControlPlaneBinaries;
  /** Named test users with static tokens (besides the admin), and their groups. */
  users?: Record<string, string[]>;
  /** kube-controller-manager's controllers; `[]` runs no controller-manager. */
  controllers?: readonly string[];
  /** Default 10.96.0.0/12, as kubesim. */
  serviceClusterIpRange?: string;
  /** Bounds the start (etcd, the API server's /readyz, the controller-manager's first work). */
  startTimeoutMs?: number;
}

export const auditEventSchema = z.object({
  stage: z.string(),
  verb: z.string(),
  requestURI: z.string(),
  user: z.object({ username: z.string(), groups: z.array(z.string()).default([]) }),
  objectRef: z
    .object({
      resource: z.string().optional(),
      namespace: z.string().optional(),
      name: z.string().optional(),
      apiGroup: z.string().optional(),
      subresource: z.string().optional(),
    })
    .optional(),
  responseStatus: z.object({ code: z.number().optional() }).optional(),
});
export type AuditEvent = z.infer<typeof auditEventSchema>;

/** What a test needs to reach a running control plane (serializable: vitest's provide/inject). */
export interface ControlPlaneInfo {
  readonly url: string;
  readonly caPem: string;
  readonly adminToken: string;
  /** Static tokens of the named test users. */
  readonly userTokens: Readonly<Record<string, string>>;
  readonly version: string;
  /** The folder with the processes' logs, the kubeconfig and the audit log. */
  readonly dir: string;
}

export interface ControlPlaneClient extends ControlPlaneInfo {
  kubeConfig(token?: string): KubeConfig;
  writeKubeconfig(path: string, token?: string): void;
  /** A ServiceAccount token from the TokenRequest API (the ServiceAccount must exist). */
  serviceAccountToken(namespace: string, name: string, expirationSeconds?: number): Promise<string>;
  /** Completed requests in the audit log so far. */
  audit(): AuditEvent[];
  /** One request with the admin token (or `token`); JSON in and out (a PATCH is a merge patch). */
  fetch(
    method: string,
    path: string,
    body?: unknown,
    token?: string,
  ): Promise<{ status: number; body: unknown }>;
}

export interface ControlPlane extends ControlPlaneClient {
  stop(): Promise<void>;
}

export async function startControlPlane(opts: ControlPlaneOptions): Promise<ControlPlane> {
  const dir = mkdtempSync(join(tmpdir(), 'eb-control-plane-'));
  const pki = await makePki();
  const file = (name: string, text: string): string => {
    const path = join(dir, name);
    writeFileSync(path, text, { mode: 0o600 });
    return path;
  };
  const ca = file('ca.crt', pki.caCert);
  const token = () => randomBytes(24).toString('hex');
  const adminToken = token();
  const userTokens: Record<string, string> = {};
  const tokenLines = [`${adminToken},admin,admin-uid,"system:masters"`];
  for (const [user, groups] of Object.entries(opts.users ?? {})) {
    userTokens[user] = token();
    tokenLines.push(`${userTokens[user]},${user},${user}-uid,"${groups.join(',')}"`);
  }
  const processes: ManagedProcess[] = [];
  let stopWatchdog = (): void => {};
  const stop = async (): Promise<void> => {
    for (const p of [...processes].reverse()) await p.stop();
    stopWatchdog();
    if (process.env['CONTROL_PLANE_KEEP'] !== '1') rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + (opts.startTimeoutMs ?? 180_000);
  const failIfExited = (p: ManagedProcess): void => {
    if (p.child.exitCode !== null || p.child.signalCode !== null)
      throw new Error(`${p.name} exited (${p.child.exitCode ?? p.child.signalCode}):\n${p.tail()}`);
  };

  try {
    // etcd
    // Both held until both are found: two probes in a row can be handed one port (load.ts).
    const [etcdClient, etcdPeer] = (await freePorts(2)) as [number, number];
    const etcdData = join(dir, 'etcd');
    mkdirSync(etcdData, { mode: 0o700 });
    const etcd = startProcess(
      'etcd',
      opts.bin.etcd,
      [
        '--name=default',
        `--data-dir=${etcdData}`,
        `--listen-client-urls=http://127.0.0.1:${etcdClient}`,
        `--advertise-client-urls=http://127.0.0.1:${etcdClient}`,
        `--listen-peer-urls=http://127.0.0.1:${etcdPeer}`,
        `--initial-advertise-peer-urls=http://127.0.0.1:${etcdPeer}`,
        `--initial-cluster=default=http://127.0.0.1:${etcdPeer}`,
        '--unsafe-no-fsync',
        '--log-level=warn',
      ],
      join(dir, 'etcd.log'),
    );
    processes.push(etcd);
    stopWatchdog = startWatchdog(processes);
    await until('etcd healthy', deadline, async () => {
      failIfExited(etcd);
      const r = await request(`http://127.0.0.1:${etcdClient}/health`).catch(() => undefined);
      const text = r ? await r.body.text() : '';
      return r?.statusCode === 200 && text.includes('true') ? true : undefined;
    });

    // kube-apiserver
    const securePort = await freePort();
    const url = `https://127.0.0.1:${securePort}`;
    const auditLog = join(dir, 'audit.log');
    const apiserver = startProcess(
      'kube-apiserver',
      opts.bin['kube-apiserver'],
      [
        `--etcd-servers=http://127.0.0.1:${etcdClient}`,
        `--secure-port=${securePort}`,
        '--bind-address=127.0.0.1',
        '--advertise-address=127.0.0.1',
        `--cert-dir=${join(dir, 'apiserver-certs')}`,
        `--tls-cert-file=${file('apiserver.crt', pki.servingCert)}`,
        `--tls-private-key-file=${file('apiserver.key', pki.servingKey)}`,
        `--client-ca-file=${ca}`,
        `--service-cluster-ip-range=${opts.serviceClusterIpRange ?? '10.96.0.0/12'}`,
        '--authorization-mode=RBAC',
        `--token-auth-file=${file('tokens.csv', tokenLines.join('\n') + '\n')}`,
        '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
        `--service-account-key-file=${file('sa.pub', pki.serviceAccountPub)}`,
        `--service-account-signing-key-file=${file('sa.key', pki.serviceAccountKey)}`,
        '--allow-privileged=true',
        `--audit-policy-file=${file('audit-policy.yaml', AUDIT_POLICY)}`,
        `--audit-log-path=${auditLog}`,
        '--audit-log-format=json',
        '--audit-log-mode=blocking',
        '--profiling=false',
      ],
      join(dir, 'kube-apiserver.log'),
    );
    processes.push(apiserver);
    stopWatchdog();
    stopWatchdog = startWatchdog(processes);
    const dispatcher = new Agent({ connect: { ca: pki.caCert } });
    const call = (method: string, path: string, body?: unknown) =>
      jsonRequest(dispatcher, url + path, method, adminToken, body);
    await until('kube-apiserver /readyz', deadline, async () => {
      failIfExited(etcd);
      failIfExited(apiserver);
      const r = await call('GET', '/readyz').catch(() => undefined);
      return r?.status === 200 ? true : undefined;
    });
    const version = z
      .object({ gitVersion: z.string() })
      .parse((await call('GET', '/version')).body).gitVersion;

    const info: ControlPlaneInfo = { url, caPem: pki.caCert, adminToken, userTokens, version, dir };
    const client = controlPlaneClient(info);

    // kube-controller-manager
    const controllers = opts.controllers ?? DEFAULT_CONTROLLERS;
    if (controllers.length) {
      const adminKubeconfig = join(dir, 'admin.kubeconfig');
      client.writeKubeconfig(adminKubeconfig);
      const kcm = startProcess(
        'kube-controller-manager',
        opts.bin['kube-controller-manager'],
        [
          `--kubeconfig=${adminKubeconfig}`,
          `--authentication-kubeconfig=${adminKubeconfig}`,
          `--authorization-kubeconfig=${adminKubeconfig}`,
          `--controllers=${controllers.join(',')}`,
          `--root-ca-file=${ca}`,
          `--service-account-private-key-file=${join(dir, 'sa.key')}`,
          '--use-service-account-credentials=false',
          '--leader-elect=false',
          '--bind-address=127.0.0.1',
          `--secure-port=${await freePort()}`,
          `--cert-dir=${join(dir, 'kcm-certs')}`,
          // A Job's or ReplicaSet's pods appear at once (the default is a 1 s batch).
          '--concurrent-deployment-syncs=5',
        ],
        join(dir, 'kube-controller-manager.log'),
      );
      processes.push(kcm);
      stopWatchdog();
      stopWatchdog = startWatchdog(processes);
      if (controllers.includes('serviceaccount-controller')) {
        // The controller-manager is working once the default namespace has its ServiceAccount.
        await until('kube-controller-manager (the default ServiceAccount)', deadline, async () => {
          failIfExited(kcm);
          const r = await call('GET', '/api/v1/namespaces/default/serviceaccounts/default');
          return r.status === 200 ? true : undefined;
        });
      }
    }

    return { ...client, stop };
  } catch (err) {
    const logs = processes.map((p) => `--- ${p.name} ---\n${p.tail(1500)}`).join('\n');
    await stop();
    throw new Error(`${err instanceof Error ? err.message : String(err)}\n${logs}`, { cause: err });
  }
}

async function until(what: string, deadline: number, check: () => Promise<true | undefined>): Promise<void> {
  let last = '';
  for (;;) {
    try {
      if (await check()) return;
    } catch (err) {
      last = err instanceof Error ? err.message : String(err);
      if (/exited \(/.test(last)) throw err;
    }
    if (Date.now() > deadline)
      throw new Error(`control plane: timed out waiting for ${what}${last ? `: ${last}` : ''}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** The API of a running control plane, from its info (in the test process or a vitest worker). */
export function controlPlaneClient(info: ControlPlaneInfo): ControlPlaneClient {
  const dispatcher = new Agent({ connect: { ca: info.caPem } });
  const call = (method: string, path: string, body?: unknown, bearer = info.adminToken) =>
    jsonRequest(dispatcher, info.url + path, method, bearer, body);
  const tokenResponse = z.object({ status: z.object({ token: z.string() }) });
  const auditLog = join(info.dir, 'audit.log');
  return {
    ...info,
    kubeConfig(t = info.adminToken) {
      const kc = new KubeConfig();
      kc.loadFromString(kubeconfigYaml(info.url, t, info.caPem));
      return kc;
    },
    writeKubeconfig(path, t = info.adminToken) {
      writeFileSync(path, kubeconfigYaml(info.url, t, info.caPem), { mode: 0o600 });
    },
    async serviceAccountToken(namespace, name, expirationSeconds = 3600) {
      const r = await call('POST', `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`, {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenRequest',
        spec: { expirationSeconds },
      });
      if (r.status !== 201)
        throw new Error(`TokenRequest ${namespace}/${name}: ${r.status} ${JSON.stringify(r.body)}`);
      return tokenResponse.parse(r.body).status.token;
    },
    audit() {
      let text: string;
      try {
        text = readFileSync(auditLog, 'utf8');
      } catch {
        return [];
      }
      const out: AuditEvent[] = [];
      for (const line of text.split('\n')) {
        if (!line) continue;
        const parsed = auditEventSchema.safeParse(JSON.parse(line));
        if (parsed.success && parsed.data.stage === 'ResponseComplete') out.push(parsed.data);
      }
      return out;
    },
    fetch: call,
  };
}

async function jsonRequest(
  dispatcher: Agent,
  url: string,
  method: string,
  bearer: string,
  body?: unknown,
): Promise<{ status: number; body: unknown }> {
  const r = await request(url, {
    method: method as 'GET',
    dispatcher,
    headers: {
      authorization: `Bearer ${bearer}`,
      accept: 'application/json',
      // PATCH bodies are JSON merge patches.
      ...(body === undefined
        ? {}
        : { 'content-type': method === 'PATCH' ? 'application/merge-patch+json' : 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await r.body.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // plain text (healthz)
  }
  return { status: r.statusCode, body: parsed };
}
