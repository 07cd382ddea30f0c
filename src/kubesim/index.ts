import { randomBytes } from 'node:crypto';
import type { KubeConfig } from '@kubernetes/client-node';
import { silentLogger, type Logger } from '../log/logger.js';
import { AuditLog, type AuditRecord } from './audit.js';
import { Authenticator, type KubesimToken } from './auth.js';
import { Authorizer } from './authorizer.js';
import { PolicyAdmission } from './admission/plugin.js';
import { Faults, type KubesimFaults } from './faults.js';
import { ResourceHandlers } from './handlers.js';
import { IpAllocator, PortAllocator } from './ipalloc.js';
import { devCertificate } from '../net/dev-cert.js';
import { buildKubeConfig, writeKubeconfigFile } from './kubeconfig.js';
import { NamespaceLifecycle } from './lifecycle.js';
import { Reviews } from './reviews.js';
import { ServiceAccountTokens } from './tokens.js';
import { resourceKey } from './resources/registry.js';
import { buildRegistry } from './kinds.js';
import { KubesimServer } from './server.js';
import { Store } from './store.js';
import { WatchHub } from './watch.js';
import { startWorkloads, type PodRunner, type Workloads } from './workloads/index.js';
import { ClusterRoleAggregation } from './rbac-aggregation.js';

/**
 * kubesim: a local Kubernetes API server simulator for tests and the demo. It serves
 * namespaces, services, events, leases and the kinds a chart installs (ServiceAccounts with
 * tokens, Secrets, ConfigMaps, RBAC authorizing requests, Deployments, Jobs, ...) over plain HTTP on loopback with the semantics of a
 * real kube-apiserver (resourceVersions, conflicts, validation, selectors, pagination, watches,
 * RBAC-style denials), plus fault injection. See docs/kubesim.md.
 */

export type { Identity, KubesimToken, PolicyRule, RequestAttributes } from './auth.js';
export type { AuditRecord } from './audit.js';
export type { RbacObjects } from './rbac.js';
export { allowedByRules } from './auth.js';
export { BOOTSTRAP_POLICY, rbacRulesFor } from './rbac.js';
export { servedKinds } from './kinds.js';
export type { FailRequestsRule, KubesimFaults } from './faults.js';
export type { PodContainer, PodRunContext, PodRunner, PodVolume } from './workloads/index.js';

export interface KubesimOptions {
  /** Default 127.0.0.1. */
  host?: string;
  /** 0 (default) lets the OS choose. */
  port?: number;
  /** Extra identities; a token without rules is an admin. */
  tokens?: KubesimToken[];
  /** Interval of BOOKMARK events on watches that ask for them; default 60000 (about what a real server does). */
  bookmarkIntervalMs?: number;
  /** Events kept for watch replay and continue tokens; default 1000. */
  compactionWindow?: number;
  /** Delay before a Terminating namespace's content is removed; default 50. */
  namespaceFinalizeDelayMs?: number;
  /** Default 10.96.0.0/12. */
  serviceClusterIpRange?: string;
  /** Default ['default', 'kube-system']. */
  initialNamespaces?: string[];
  /**
   * Bytes of live events a watch may have queued for a client that does not read before kubesim
   * closes that watch (the client re-watches); default 10 MiB.
   */
  watchBufferBytes?: number;
  /** How long a list or watch at a future resourceVersion waits for it before answering 504; default 3000. */
  futureResourceVersionWaitMs?: number;
  /** Serve HTTPS with the development certificate (needed by kubectl, which sends no token over HTTP). */
  tls?: boolean;
  logger?: Logger;
  /**
   * Opt-in process-backed workloads: serves core/v1 Pods, runs a Deployment controller (pods
   * named and labelled as a ReplicaSet's, RollingUpdate and Recreate) and a kubelet that starts
   * each Pod's container through this runner with its own loopback pod IP, probes its
   * readinessProbe, and deletes pods gracefully (SIGTERM, SIGKILL after the grace period). Off
   * by default: without it there are no Pods and Deployments are stored only. See docs/kubesim.md.
   */
  podRunner?: PodRunner;
  /**
   * With a podRunner: also run a Job controller (pods from each Job's template until one
   * succeeds or the Job fails), as a cluster does for Helm's hook Jobs. Off by default: tests
   * that play the hook Jobs themselves keep doing so.
   */
  runJobs?: boolean;
  /** On stop(): how long pod processes get between SIGTERM and SIGKILL; default 2000. */
  podStopGraceMs?: number;
}

export interface Kubesim {
  /** http(s)://host:port, stable across restart(). */
  url: string;
  /** With TLS: the self-signed certificate clients trust. */
  caPem?: string;
  adminToken: string;
  /** A loaded KubeConfig for the admin token or the given one. */
  kubeConfig(token?: string): KubeConfig;
  writeKubeconfig(path: string, token?: string): Promise<void>;
  faults: KubesimFaults;
  /**
   * The bearer token of an existing ServiceAccount: requests with it are
   * `system:serviceaccount:<ns>:<name>` and authorized from the stored RBAC objects. Valid while
   * that ServiceAccount object exists.
   */
  serviceAccountToken(namespace: string, name: string): string;
  /** Every resource request since start (or the last clearAudit), with the authorizer's answer. */
  audit(): readonly AuditRecord[];
  clearAudit(): void;
  /** Drops the whole event history: older watch RVs and continue tokens become 410. */
  compact(): void;
  /** Closes every connection and the listener, then listens again on the same port; state is kept. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export async function startKubesim(opts: KubesimOptions = {}): Promise<Kubesim> {
  const log = opts.logger ?? silentLogger();
  const host = opts.host ?? '127.0.0.1';
  const store = new Store(opts.compactionWindow ?? 1000);
  const {
    registry,
    namespaces,
    serviceAccounts,
    rbac: rbacDefs,
    policies: policyDefs,
    deployments,
    jobs,
    pods,
  } = buildRegistry(new IpAllocator(opts.serviceClusterIpRange ?? '10.96.0.0/12'), new PortAllocator(), {
    pods: opts.podRunner !== undefined,
  });

  const lifecycle = new NamespaceLifecycle(
    store,
    registry,
    namespaces,
    opts.namespaceFinalizeDelayMs ?? 50,
    log,
  );
  const handlers = new ResourceHandlers(
    store,
    lifecycle,
    namespaces,
    new PolicyAdmission(store, registry, { ...policyDefs, namespaces }),
  );
  const watches = new WatchHub(store, {
    bookmarkIntervalMs: opts.bookmarkIntervalMs ?? 60_000,
    bufferBytes: opts.watchBufferBytes ?? 10 * 1024 * 1024,
    log,
  });
  const faults = new Faults(watches);

  const tokens = [...(opts.tokens ?? [])];
  let adminToken = tokens.find((t) => !t.rules)?.token;
  if (!adminToken) {
    adminToken = `kubesim-${randomBytes(16).toString('hex')}`;
    tokens.push({ token: adminToken, user: 'kubesim-admin' });
  }
  // The node agent's own identity (an admin, as a kubelet's is broad), apart from the admin's in the audit.
  const nodeToken = `kubesim-node-${randomBytes(16).toString('hex')}`;
  if (opts.podRunner) tokens.push({ token: nodeToken, user: 'system:node:kubesim' });
  const saTokens = new ServiceAccountTokens((ns, name) =>
    store.get(resourceKey(serviceAccounts), `${ns}/${name}`),
  );
  const auth = new Authenticator(tokens, (t) => saTokens.authenticate(t));
  const list = (def: (typeof rbacDefs)[keyof typeof rbacDefs]) => store.list(resourceKey(def));
  const authorizer = new Authorizer(() => ({
    roles: list(rbacDefs.roles),
    clusterRoles: list(rbacDefs.clusterRoles),
    roleBindings: list(rbacDefs.roleBindings),
    clusterRoleBindings: list(rbacDefs.clusterRoleBindings),
  }));
  const auditLog = new AuditLog();

  for (const name of opts.initialNamespaces ?? ['default', 'kube-system']) {
    handlers.create(namespaces, undefined, { value: { metadata: { name } }, duplicates: [] }, {});
  }

  const aggregation = new ClusterRoleAggregation(store, handlers, rbacDefs.clusterRoles, log);
  aggregation.start();

  const workloads: Workloads | undefined =
    opts.podRunner && pods
      ? startWorkloads({
          store,
          handlers,
          deployments,
          pods,
          runner: opts.podRunner,
          log,
          ...(opts.runJobs ? { jobs } : {}),
          serviceAccountToken: (namespace, name) => saTokens.issue(namespace, name),
        })
      : undefined;

  const cert = opts.tls ? await devCertificate() : undefined;
  const server = new KubesimServer(
    {
      registry,
      handlers,
      watches,
      faults,
      auth,
      authorizer,
      reviews: new Reviews(authorizer),
      audit: (record: AuditRecord) => auditLog.add(record),
      log,
      store,
      futureRvWaitMs: opts.futureResourceVersionWaitMs ?? 3000,
    },
    cert,
  );
  const port = await server.listen(host, opts.port ?? 0);
  const url = `${cert ? 'https' : 'http'}://${host.includes(':') ? `[${host}]` : host}:${port}`;
  await workloads?.startNode(buildKubeConfig(url, nodeToken, cert?.cert));
  const admin = adminToken;
  let stopped = false;

  return {
    url,
    adminToken: admin,
    ...(cert ? { caPem: cert.cert } : {}),
    kubeConfig: (token = admin) => buildKubeConfig(url, token, cert?.cert),
    writeKubeconfig: (path, token = admin) => writeKubeconfigFile(path, url, token, cert?.cert),
    faults,
    serviceAccountToken: (namespace, name) => saTokens.issue(namespace, name),
    audit: () => auditLog.all(),
    clearAudit: () => auditLog.clear(),
    compact: () => store.compact(),
    async restart() {
      await server.close();
      await server.listen(host, port);
      log.debug({ url }, 'kubesim restarted');
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      lifecycle.stop();
      aggregation.stop();
      await workloads?.stop(opts.podStopGraceMs ?? 2000);
      watches.dispose();
      await server.close();
    },
  };
}
