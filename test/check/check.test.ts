import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runCli } from '../../src/cli/run.js';
import { formatChecks, type CheckResult } from '../../src/check/result.js';
import type { IngressCheckSettings } from '../../src/check/ingress-probe.js';
import { runChecks } from '../../src/check/run-checks.js';
import { controllerStatusCheck } from '../../src/check/controller-status.js';
import {
  resolveControllerConfig,
  type ControllerConfig,
  type ControllerConfigInput,
} from '../../src/controller/config.js';
import type { Controller } from '../../src/controller/controller.js';
import { ForwarderConfig } from '../../src/forwarder/config.js';
import { startForwarder, type Forwarder } from '../../src/forwarder/forwarder.js';
import { microTime } from '../../src/kube/index.js';
import { startKubesim, type Kubesim, type PolicyRule } from '../../src/kubesim/index.js';
import { silentLogger } from '../../src/log/logger.js';
import { OPERATOR_NS, startEnv, type ControllerEnv } from '../controller/env.js';
import { ACME_AUTHTOKEN, ACME_KEY, startTestMock } from '../helpers/mock-api.js';
import { captured } from '../helpers/capture-io.js';
import { api } from '../kubesim/helpers.js';
import { waitFor } from '../kube/helpers.js';
import { budget } from '../helpers/budget.js';

/**
 * `check` against a healthy install (mock management API, kubesim, a running controller that
 * leads and a real forwarder), then against each broken setup: each fails exactly its own line.
 */

let env: ControllerEnv;
let controller: Controller;
let forwarder: Forwarder;
let forwarderUrl: string;

/** `endpoint-binder check` against the test environment through a kubeconfig file. */
function checkArgv(kubeconfig: string): string[] {
  return [
    'check',
    '--api-url',
    env.mock.url,
    '--operator-namespace',
    OPERATOR_NS,
    '--kubeconfig',
    kubeconfig,
    '--forwarder-url',
    forwarderUrl,
    '--controller-url',
    controller.url,
    // The test forwarder's setting: plain TCP to the loopback mock ingress.
    '--ingress-tls',
    'false',
  ];
}

function config(overrides: ControllerConfigInput = {}, apiKey = ACME_KEY): ControllerConfig {
  const r = resolveControllerConfig(
    {
      api: { baseUrl: env.mock.url },
      operatorNamespace: OPERATOR_NS,
      http: { listen: '127.0.0.1:0' },
      ...overrides,
    },
    { ENDPOINT_BINDER_API_KEY: apiKey },
  );
  if (!r.ok) throw new Error(r.errors.join('\n'));
  return r.config;
}

async function closedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as AddressInfo).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

function failed(results: CheckResult[]): string[] {
  return results.filter((r) => r.status === 'fail').map((r) => r.id);
}

/** The forwarder's ingress settings of the test install (plain TCP to the loopback mock ingress). */
function forwarderSettings(ingress: Record<string, unknown> = { tls: false }): ForwarderConfig {
  return ForwarderConfig.parse({ releaseName: 'endpoint-binder', operatorNamespace: OPERATOR_NS, ingress });
}

function check(
  cfg: ControllerConfig,
  more: {
    sim?: Kubesim;
    token?: string;
    forwarderUrl?: string;
    ingress?: IngressCheckSettings;
    controllerUrls?: string[];
  } = {},
) {
  // A separate kubesim holds no install record, so only the shared one gets the ingress lines by default.
  const ingress =
    more.ingress ??
    (more.sim ? undefined : { forwarder: forwarderSettings(), authtokenFromEnv: ACME_AUTHTOKEN });
  return runChecks({
    config: cfg,
    kubeConfig: (more.sim ?? env.sim).kubeConfig(more.token),
    forwarderUrls: [more.forwarderUrl ?? forwarderUrl],
    controllerUrls: more.controllerUrls ?? [controller.url],
    forwarderSelector: 'app.kubernetes.io/component=forwarder',
    ...(ingress ? { ingress } : {}),
    timeoutMs: 5_000,
  });
}

/** The controller's ServiceAccount as the chart creates it: found by its labels, whatever its name. */
async function controllerServiceAccount(sim: Kubesim, name = 'endpoint-binder-controller'): Promise<void> {
  const res = await api(sim, 'POST', `/api/v1/namespaces/${OPERATOR_NS}/serviceaccounts`, {
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: {
      name,
      labels: {
        'app.kubernetes.io/instance': 'endpoint-binder',
        'app.kubernetes.io/component': 'controller',
      },
    },
  });
  expect(res.status).toBe(201);
}

/** The chart's controller rules (ClusterRole and leader-election Role), bound to `account`. */
async function grantChartRights(sim: Kubesim, account = 'endpoint-binder-controller'): Promise<void> {
  const rbac = '/apis/rbac.authorization.k8s.io/v1';
  const ref = (kind: string, name: string) => ({ apiGroup: 'rbac.authorization.k8s.io', kind, name });
  const subjects = [{ kind: 'ServiceAccount', name: account, namespace: OPERATOR_NS }];
  for (const [path, body] of [
    [
      `${rbac}/clusterroles`,
      {
        metadata: { name: 'eb-controller' },
        rules: [
          {
            apiGroups: [''],
            resources: ['services'],
            verbs: ['get', 'list', 'watch', 'create', 'update', 'delete'],
          },
          { apiGroups: [''], resources: ['namespaces'], verbs: ['get', 'list', 'watch'] },
          { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] },
        ],
      },
    ],
    [
      `${rbac}/clusterrolebindings`,
      { metadata: { name: 'eb-controller' }, roleRef: ref('ClusterRole', 'eb-controller'), subjects },
    ],
    [
      `${rbac}/namespaces/${OPERATOR_NS}/roles`,
      {
        metadata: { name: 'eb-controller-leader-election' },
        rules: [
          {
            apiGroups: ['coordination.k8s.io'],
            resources: ['leases'],
            verbs: ['get', 'update'],
            resourceNames: ['endpoint-binder-controller'],
          },
          { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] },
        ],
      },
    ],
    [
      `${rbac}/namespaces/${OPERATOR_NS}/rolebindings`,
      {
        metadata: { name: 'eb-controller-leader-election' },
        roleRef: ref('Role', 'eb-controller-leader-election'),
        subjects,
      },
    ],
  ] as const) {
    const res = await api(sim, 'POST', path, body);
    expect(res.status, path).toBe(201);
  }
}

const CONTROLLER_SA = 'system:serviceaccount:endpoint-binder:endpoint-binder-controller';
/** The token that `withOwnCluster({ rules })` grants exactly those rules, as CONTROLLER_SA. */
const SA_TOKEN = 'controller-sa-token';

/**
 * Runs `fn` against a kubesim of its own (it holds no install record) with the operator namespace;
 * with `lease`, the controller's Lease held by `lease.holder` and last renewed `renewedAgoMs` ago;
 * with `rules`, SA_TOKEN authenticates as CONTROLLER_SA with exactly those rules. Stopped after.
 */
async function withOwnCluster(
  opts: { lease?: { holder: string; renewedAgoMs: number; durationSeconds: number }; rules?: PolicyRule[] },
  fn: (sim: Kubesim) => Promise<void>,
): Promise<void> {
  const sim = await startKubesim({
    initialNamespaces: ['default', OPERATOR_NS],
    ...(opts.rules ? { tokens: [{ token: SA_TOKEN, user: CONTROLLER_SA, rules: opts.rules }] } : {}),
  });
  try {
    if (opts.lease) {
      const at = microTime(Date.now() - opts.lease.renewedAgoMs);
      const r = await api(sim, 'POST', `/apis/coordination.k8s.io/v1/namespaces/${OPERATOR_NS}/leases`, {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name: 'endpoint-binder-controller' },
        spec: {
          holderIdentity: opts.lease.holder,
          leaseDurationSeconds: opts.lease.durationSeconds,
          renewTime: at,
          acquireTime: at,
        },
      });
      expect(r.status).toBe(201);
    }
    await fn(sim);
  } finally {
    await sim.stop();
  }
}

/** A Lease that a live replica renewed just now. */
const liveLease = { holder: 'replica-a', renewedAgoMs: 0, durationSeconds: 3600 };

beforeAll(async () => {
  env = await startEnv();
  await controllerServiceAccount(env.sim);
  await grantChartRights(env.sim);
  controller = await env.startController({
    leaderElection: { leaseDurationSeconds: 15, renewDeadlineSeconds: 10, retryPeriodSeconds: 0.25 },
  });
  await controller.caughtUp();
  await waitFor(() => controller.isLeader(), 'the controller to lead', { timeoutMs: 20_000 });
  forwarder = await startForwarder({
    config: ForwarderConfig.parse({
      releaseName: 'endpoint-binder',
      operatorNamespace: OPERATOR_NS,
      listenHost: '127.0.0.1',
      http: { listen: '127.0.0.1:0' },
      ingress: { tls: false },
    }),
    authtoken: ACME_AUTHTOKEN,
    kubeConfig: env.sim.kubeConfig(),
    logger: silentLogger(),
  });
  forwarderUrl = `http://127.0.0.1:${forwarder.httpAddress.port}`;
  await waitFor(() => forwarder.readiness().ready, 'the forwarder to be ready', { timeoutMs: 20_000 });
}, budget(90_000));

afterAll(async () => {
  await forwarder?.stop();
  await env?.close();
});

describe('endpoint-binder check', () => {
  it('passes every line against a healthy install', async () => {
    const results = await check(config());
    expect(failed(results), formatChecks(results)).toEqual([]);
    expect(results.every((r) => r.status === 'ok')).toBe(true);
    const ids = results.map((r) => r.id);
    for (const id of [
      'api.reachable',
      'api.key',
      'api.registration',
      'cluster.reachable',
      'cluster.namespace',
      'cluster.lease',
      'forwarders.ready',
      'ingress',
      'cluster.excess-rights',
      'controllers.status',
    ])
      expect(ids).toContain(id);
    expect(ids.filter((id) => id.startsWith('cluster.rbac.')).length).toBe(5);
  });

  it("reads the leading controller's /status: its errors and not-ready reasons fail exactly that line", async () => {
    const doc = {
      operator: { id: 'k8sop_x', ingress: null },
      install: { release: 'endpoint-binder', operatorNamespace: OPERATOR_NS },
      selector: 'true',
      bindingsEnabled: true,
      leader: true,
      leadership: { holder: 'pod-a', since: null, cannotLead: [] },
      ready: false,
      notReadyReasons: ['endpoint feed: the management API answered 503'],
      notificationsLive: false,
      lastFullSync: null,
      counts: { error: 1 },
      deleting: [{ namespace: 'shop', name: 'web', reason: 'waits on finalizer example.com/x' }],
      endpoints: [
        { id: 'ep_1', url: 'http://web.shop', state: 'error', reason: 'create Service shop/web: HTTP 500' },
      ],
    };
    const srv = createHttpServer((_req, res) => res.end(JSON.stringify(doc)));
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(srv.address() as AddressInfo).port}`;
      const results = await check(config(), { controllerUrls: [url] });
      expect(failed(results), formatChecks(results)).toEqual(['controllers.status']);
      const line = results.find((r) => r.id === 'controllers.status')!;
      expect(line.problems).toEqual([
        'not ready: endpoint feed: the management API answered 503',
        'endpoint ep_1 (http://web.shop) in error: create Service shop/web: HTTP 500',
      ]);
      expect(line.hint).toContain('1 delete waiting: shop/web (waits on finalizer example.com/x)');
      // No replica that leads: said so, with the Lease holder it names.
      const follower = { ...doc, leader: false, ready: true, endpoints: [], counts: {} };
      const none = controllerStatusCheck([{ from: url, doc: follower }]);
      expect(none.status).toBe('fail');
      expect(none.hint).toContain('none of the 1 replicas read leads (Lease holder: pod-a)');
    } finally {
      await new Promise<void>((r) => srv.close(() => r()));
    }
  });

  it('a bad API key fails only the key line', async () => {
    const results = await check(config({}, 'not_a_valid_key_0123456789'));
    expect(failed(results)).toEqual(['api.key']);
    expect(results.find((r) => r.id === 'api.key')!.hint).toContain('ENDPOINT_BINDER_API_KEY');
    expect(results.find((r) => r.id === 'api.registration')!.status).toBe('skipped');
  });

  it('a wrong API URL fails only the reachability line', async () => {
    const results = await check(config({ api: { baseUrl: `http://127.0.0.1:${await closedPort()}` } }));
    expect(failed(results)).toEqual(['api.reachable']);
    expect(results.find((r) => r.id === 'api.reachable')!.hint).toContain('api.baseUrl');
  });

  it('a selector changed in the config (record drifted) fails only the registration line, naming the field', async () => {
    const results = await check(config({ bindings: { endpointSelector: 'endpoint.port > 1' } }));
    expect(failed(results)).toEqual(['api.registration']);
    expect(results.find((r) => r.id === 'api.registration')!.hint).toContain('bindings.endpointSelector');
  });

  it('a missing operator namespace fails only the namespace line', async () => {
    const results = await check(config({ operatorNamespace: 'no-such-ns' }));
    // The registration of a namespace that never ran is absent too: that line is about the API.
    expect(failed(results).filter((id) => id !== 'api.registration')).toEqual(['cluster.namespace']);
    expect(results.find((r) => r.id === 'cluster.namespace')!.hint).toContain(
      'kubectl create namespace no-such-ns',
    );
    expect(results.find((r) => r.id === 'cluster.lease')!.status).toBe('skipped');
  });

  it('a forwarder that is down fails only the forwarder line', async () => {
    const results = await check(config(), { forwarderUrl: `http://127.0.0.1:${await closedPort()}` });
    expect(failed(results)).toEqual(['forwarders.ready']);
  });

  it('a Lease nobody renews fails only the Lease line', async () => {
    const lease = { holder: 'gone-replica', renewedAgoMs: 120_000, durationSeconds: 15 };
    await withOwnCluster({ lease }, async (sim) => {
      const results = await check(config(), { sim });
      expect(failed(results)).toEqual(['cluster.lease']);
      expect(results.find((r) => r.id === 'cluster.lease')!.hint).toContain('gone-replica');
    });
  });

  it('an RBAC rule removed fails exactly the line of that permission', async () => {
    // The chart's controller rules without `events`.
    const rules: PolicyRule[] = [
      {
        apiGroups: [''],
        resources: ['services'],
        verbs: ['get', 'list', 'watch', 'create', 'update', 'delete'],
      },
      { apiGroups: [''], resources: ['namespaces'], verbs: ['get', 'list', 'watch'] },
      {
        apiGroups: ['coordination.k8s.io'],
        resources: ['leases'],
        verbs: ['get', 'update'],
        namespaces: [OPERATOR_NS],
        resourceNames: ['endpoint-binder-controller'],
      },
      {
        apiGroups: ['coordination.k8s.io'],
        resources: ['leases'],
        verbs: ['create'],
        namespaces: [OPERATOR_NS],
      },
    ];
    await withOwnCluster({ lease: liveLease, rules }, async (sim) => {
      const results = await check(config(), { sim, token: SA_TOKEN });
      expect(failed(results), formatChecks(results)).toEqual(['cluster.rbac.events.create-patch']);
      expect(results.find((r) => r.id === 'cluster.rbac.events.create-patch')!.hint).toContain(
        `${CONTROLLER_SA} may not create, patch events`,
      );
    });
  });

  it("from an admin kubeconfig, the rights lines review the controller's account: its binding deleted, they fail naming it", async () => {
    await withOwnCluster({ lease: liveLease }, async (sim) => {
      await controllerServiceAccount(sim);
      await grantChartRights(sim);
      const before = await check(config(), { sim });
      const rbac = (rs: CheckResult[]) => rs.filter((r) => r.id.startsWith('cluster.rbac.'));
      expect(rbac(before).map((r) => r.status)).toEqual(['ok', 'ok', 'ok', 'ok', 'ok']);
      for (const r of rbac(before)) expect(r.title.startsWith(`${CONTROLLER_SA} may `), r.title).toBe(true);
      const del = await api(
        sim,
        'DELETE',
        '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/eb-controller',
      );
      expect(del.status).toBe(200);
      const after = await check(config(), { sim });
      // The admin running check may do all of it; the controller's account no longer may.
      expect(
        failed(after).filter((id) => id.startsWith('cluster.rbac.')),
        formatChecks(after),
      ).toEqual([
        'cluster.rbac.services.get-list-watch-create-update-delete',
        'cluster.rbac.namespaces.get-list-watch',
        'cluster.rbac.events.create-patch',
      ]);
      expect(after.find((r) => r.id === 'cluster.rbac.events.create-patch')!.hint).toContain(
        `${CONTROLLER_SA} may not create, patch events`,
      );
      expect(formatChecks(after)).toMatch(/\n\d+ of \d+ checks failed.*: exit code 1\.\n$/);
    });
  });

  it('a service account holding more than the chart grants fails exactly the excess-rights line, naming each extra right', async () => {
    const rules: PolicyRule[] = [
      // The chart's rules, with every verb on Services instead of its six...
      { apiGroups: [''], resources: ['services'], verbs: ['*'] },
      { apiGroups: [''], resources: ['namespaces'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] },
      {
        apiGroups: ['coordination.k8s.io'],
        resources: ['leases'],
        verbs: ['get', 'update', 'create'],
        namespaces: [OPERATOR_NS],
      },
      // ...and Secrets in the operator namespace.
      { apiGroups: [''], resources: ['secrets'], verbs: ['get'], namespaces: [OPERATOR_NS] },
    ];
    await withOwnCluster({ lease: liveLease, rules }, async (sim) => {
      const results = await check(config(), { sim, token: SA_TOKEN });
      expect(failed(results), formatChecks(results)).toEqual(['cluster.excess-rights']);
      const line = results.find((r) => r.id === 'cluster.excess-rights')!;
      expect(line.title).toContain(CONTROLLER_SA);
      expect(line.hint).toBe(
        `it may also get secrets in ${OPERATOR_NS}, patch services, deletecollection services ` +
          '(the controller reads no Secret; Services are replaced, never patched, and deleted one by one); ' +
          `remove the extra (Cluster)RoleBinding: kubectl auth can-i --list --as ${CONTROLLER_SA}`,
      );
    });
  });

  it("from a kubeconfig that is not the service account, the rights of the chart's controller account are asked by impersonation", async () => {
    await withOwnCluster({}, async (sim) => {
      const grant = await api(sim, 'POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name: 'too-much' },
        rules: [{ apiGroups: [''], resources: ['users'], verbs: ['impersonate'] }],
      });
      expect(grant.status).toBe(201);
      const bind = await api(sim, 'POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: 'too-much' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'too-much' },
        subjects: [{ kind: 'ServiceAccount', name: 'custom-name', namespace: OPERATOR_NS }],
      });
      expect(bind.status).toBe(201);
      // Without a labelled ServiceAccount it does not guess whose rights to ask about.
      const unknown = (await check(config(), { sim })).find((r) => r.id === 'cluster.excess-rights')!;
      expect(unknown.status).toBe('skipped');
      expect(unknown.hint ?? unknown.problems?.join(' ') ?? '').toContain('--service-account');
      await controllerServiceAccount(sim, 'custom-name');
      const results = await check(config(), { sim });
      const line = results.find((r) => r.id === 'cluster.excess-rights')!;
      expect(line.status, formatChecks(results)).toBe('fail');
      expect(line.title).toContain('system:serviceaccount:endpoint-binder:custom-name');
      expect(line.hint).toMatch(/^it may also impersonate users \(the controller acts only as itself\)/);
    });
  });

  it('runs as `endpoint-binder check` with a kubeconfig file: ✓ lines, exit 0; -o json; exit 1 on a failure', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'eb-check-'));
    const kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(kubeconfig, env.sim.kubeConfig().exportConfig());
    vi.stubEnv('ENDPOINT_BINDER_API_KEY', ACME_KEY);
    vi.stubEnv('ENDPOINT_BINDER_AUTHTOKEN', ACME_AUTHTOKEN);
    const argv = checkArgv(kubeconfig);
    try {
      let io = captured();
      const first = await runCli(argv);
      expect(first, io.out() + io.err()).toBe(0);
      expect(io.out()).toMatch(/^✓ config valid/m);
      expect(io.out()).toMatch(
        /^✓ Lease endpoint-binder\/endpoint-binder-controller held and renewed recently/m,
      );
      expect(io.out()).toMatch(/All \d+ checks passed\./);
      vi.restoreAllMocks();
      io = captured();
      expect(await runCli([...argv, '-o', 'json'])).toBe(0);
      const doc = JSON.parse(io.out()) as { ok: boolean; checks: { id: string; status: string }[] };
      expect(doc.ok).toBe(true);
      expect(doc.checks.map((c) => c.id)).toContain('forwarders.ready');
      vi.restoreAllMocks();
      vi.stubEnv('ENDPOINT_BINDER_API_KEY', 'wrong_key_0123456789');
      io = captured();
      expect(await runCli(argv)).toBe(1);
      expect(io.out()).toMatch(/^✗ API key accepted/m);
      expect(io.out()).toMatch(/^ {4}hint: the API answered 40[13] .*set ENDPOINT_BINDER_API_KEY/m);
    } finally {
      vi.restoreAllMocks();
      vi.unstubAllEnvs();
    }
  });
});

describe('endpoint-binder check: the binding ingress (dialled as the forwarder dials)', () => {
  async function listening(): Promise<{ port: number; close(): Promise<void> }> {
    const srv = createServer((s) => s.on('error', () => undefined).end());
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    return {
      port: (srv.address() as AddressInfo).port,
      close: () => new Promise<void>((r) => srv.close(() => r())),
    };
  }

  it('passes with the address from the install record, names that address, and says it spoke v2 (h2c) as the forwarder does', async () => {
    const results = await check(config());
    const line = results.find((r) => r.id === 'ingress')!;
    expect(line.status, formatChecks(results)).toBe('ok');
    expect(line.title).toContain(env.mock.api.ingressAdvertiseAddress!);
    expect(line.title, line.title).toMatch(/authtoken accepted, over v2 \(h2c\)$/);
  });

  /** A plain loopback ingress that speaks v1 only (no h2c), and the forwarder's settings for it. */
  async function v1OnlyIngress(tls = false) {
    const mock = await startTestMock({
      ingress: { host: '127.0.0.1' },
      config: { ...tlsMockConfig(), ingress: { tls, h2: false } },
    });
    const dir = mkdtempSync(join(tmpdir(), 'eb-check-v1-'));
    const caFile = join(dir, 'ca.pem');
    if (tls) writeFileSync(caFile, mock.api.ingressCaPem!);
    const settings = (protocol: string): IngressCheckSettings => ({
      forwarder: forwarderSettings({
        address: mock.api.ingressAddress!,
        tls,
        protocol,
        ...(tls ? { caFile, serverName: 'localhost' } : {}),
      }),
      authtokenFromEnv: ACME_AUTHTOKEN,
    });
    return { mock, settings };
  }

  for (const tls of [false, true]) {
    const how = tls ? 'TLS without ALPN h2' : 'plain TCP without h2c';
    it(`a v1-only ingress (${how}): auto passes over v1 and says the ingress offered no h2; forced v2 fails naming forwarder.ingressProtocol`, async () => {
      const { mock, settings } = await v1OnlyIngress(tls);
      try {
        let results = await check(config(), { ingress: settings('auto') });
        let line = results.find((r) => r.id === 'ingress')!;
        expect(line.status, formatChecks(results)).toBe('ok');
        expect(line.title).toMatch(/, over v1 \(the ingress offered no h2\)$/);

        results = await check(config(), { ingress: settings('v2') });
        expect(failed(results), formatChecks(results)).toEqual(['ingress']);
        line = results.find((r) => r.id === 'ingress')!;
        expect(line.hint, line.hint).toMatch(/^ERR_797: /);
        expect(line.hint).toContain("ingress.protocol is v2 (the chart's forwarder.ingressProtocol)");
        expect(line.hint).toContain('set it to auto');
        expect(line.hint).not.toContain('\n');

        results = await check(config(), { ingress: settings('v1') });
        line = results.find((r) => r.id === 'ingress')!;
        expect(line.status, formatChecks(results)).toBe('ok');
        expect(line.title).toMatch(/, over v1 \(ingress\.protocol: v1\)$/);
      } finally {
        await mock.close();
      }
    });
  }

  it('a bad authtoken fails exactly the ingress line, with ERR_710 and its text', async () => {
    const results = await check(config(), {
      ingress: { forwarder: forwarderSettings(), authtokenFromEnv: 'not_the_authtoken_0123456789' },
    });
    expect(failed(results), formatChecks(results)).toEqual(['ingress']);
    const hint = results.find((r) => r.id === 'ingress')!.hint!;
    expect(hint).toContain('ERR_710: The authtoken is not valid for any account.');
    expect(hint).toContain('AUTHTOKEN');
  });

  it('an ingress TLS certificate this host does not trust (CA mismatch) fails exactly the ingress line; with its CA it passes', async () => {
    const tlsMock = await startTestMock({ ingress: { host: '127.0.0.1' }, config: tlsMockConfig() });
    try {
      const address = tlsMock.api.ingressAddress!;
      // No caFile: the system CAs, which do not include the mock ingress's development CA.
      let results = await check(config(), {
        ingress: {
          forwarder: forwarderSettings({ address, tls: true, serverName: 'localhost' }),
          authtokenFromEnv: ACME_AUTHTOKEN,
        },
      });
      expect(failed(results), formatChecks(results)).toEqual(['ingress']);
      const hint = results.find((r) => r.id === 'ingress')!.hint!;
      expect(hint).toMatch(/^ERR_795: Dialer: the ingress's TLS certificate was refused/);
      expect(hint).toContain('ingress.caFile');

      const dir = mkdtempSync(join(tmpdir(), 'eb-check-ca-'));
      const caFile = join(dir, 'ca.pem');
      writeFileSync(caFile, tlsMock.api.ingressCaPem!);
      results = await check(config(), {
        ingress: {
          forwarder: forwarderSettings({ address, tls: true, caFile, serverName: 'localhost' }),
          authtokenFromEnv: ACME_AUTHTOKEN,
        },
      });
      expect(failed(results), formatChecks(results)).toEqual([]);
      expect(results.find((r) => r.id === 'ingress')!.title).toContain(`at ${address} with TLS`);
      expect(results.find((r) => r.id === 'ingress')!.title).toMatch(/, over v2 \(h2\)$/);
    } finally {
      await tlsMock.close();
    }
  });

  it('a plain dial (ingress.tls false) to a TLS ingress fails exactly the ingress line with ERR_796 and names ingress.tls', async () => {
    const tlsMock = await startTestMock({ ingress: { host: '127.0.0.1' }, config: tlsMockConfig() });
    try {
      const results = await check(config(), {
        ingress: {
          forwarder: forwarderSettings({ address: tlsMock.api.ingressAddress!, tls: false }),
          authtokenFromEnv: ACME_AUTHTOKEN,
        },
      });
      expect(failed(results), formatChecks(results)).toEqual(['ingress']);
      const hint = results.find((r) => r.id === 'ingress')!.hint!;
      expect(hint, hint).toMatch(/^ERR_796: .*set ingress\.tls to true/);
      expect(hint).not.toContain('\n');
    } finally {
      await tlsMock.close();
    }
  });

  it('--endpoint over v2: ok for a live upstream, ERR_730 (from the error status body) and its text for a dead one, one line for an unknown id', async () => {
    const upstream = await listening();
    try {
      const live = await env.createEndpoint('tcp://check-live.prod:7100', {
        upstream_url: `tcp://127.0.0.1:${upstream.port}`,
      });
      const dead = await env.createEndpoint('tcp://check-dead.prod:7101', {
        upstream_url: `tcp://127.0.0.1:${await closedPort()}`,
      });
      const withEndpoint = (endpoint: string) =>
        check(config(), {
          ingress: { forwarder: forwarderSettings(), authtokenFromEnv: ACME_AUTHTOKEN, endpoint },
        });

      let results = await withEndpoint(live.id);
      expect(failed(results), formatChecks(results)).toEqual([]);
      expect(results.find((r) => r.id === 'ingress.endpoint')!.title).toBe(
        `one connection through the ingress to endpoint ${live.id} (tcp://check-live.prod:7100) answered ok`,
      );

      results = await withEndpoint(dead.url);
      expect(failed(results), formatChecks(results)).toEqual(['ingress.endpoint']);
      // The dial went over v2: the refusal came as a CONNECT error status.
      expect(results.find((r) => r.id === 'ingress')!.title).toMatch(/over v2 \(h2c\)$/);
      expect(results.find((r) => r.id === 'ingress.endpoint')!.hint).toMatch(
        /^the ingress answered ERR_730: The endpoint's upstream refused the connection\. \(.*\); start the endpoint's upstream or fix its upstream_url$/,
      );

      results = await withEndpoint('ep_doesnotexist0000000000000');
      expect(failed(results), formatChecks(results)).toEqual(['ingress.endpoint']);
      const hint = results.find((r) => r.id === 'ingress.endpoint')!.hint!;
      expect(hint).toBe(
        'no endpoint ep_doesnotexist0000000000000 in the account of ENDPOINT_BINDER_API_KEY; `endpoint-binder status` lists the endpoints, or pass the endpoint URL',
      );
      expect(hint).not.toContain('\n');
    } finally {
      await upstream.close();
    }
  });

  it('without an authtoken the ingress line is not run and says how to give one; the CLI prints the --endpoint line', async () => {
    const results = await check(config(), { ingress: { forwarder: forwarderSettings() } });
    const line = results.find((r) => r.id === 'ingress')!;
    expect(line.status).toBe('skipped');
    expect(line.hint).toContain('ENDPOINT_BINDER_AUTHTOKEN');

    const dir = mkdtempSync(join(tmpdir(), 'eb-check-ep-'));
    const kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(kubeconfig, env.sim.kubeConfig().exportConfig());
    vi.stubEnv('ENDPOINT_BINDER_API_KEY', ACME_KEY);
    vi.stubEnv('ENDPOINT_BINDER_AUTHTOKEN', ACME_AUTHTOKEN);
    try {
      const io = captured();
      const code = await runCli([...checkArgv(kubeconfig), '--endpoint', 'ep_unknown0000000000000000000']);
      expect(code).toBe(1);
      expect(io.out()).toMatch(
        /^✓ binding ingress reachable at .* \(plain TCP, loopback\) and the authtoken accepted, over v2 \(h2c\)$/m,
      );
      expect(io.out()).toMatch(
        /^✗ one connection through the ingress to ep_unknown0000000000000000000 answered ok\n {4}hint: no endpoint ep_unknown0000000000000000000 in the account/m,
      );
      expect(io.err()).toBe('');
    } finally {
      vi.restoreAllMocks();
      vi.unstubAllEnvs();
    }
  });
});

function tlsMockConfig() {
  return {
    accounts: [{ id: 'acme', api_keys: [ACME_KEY], authtokens: [ACME_AUTHTOKEN] }],
    rate_limit: { requests: 100_000, window_seconds: 60 },
    ingress: { tls: true },
  };
}
