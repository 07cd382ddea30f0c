import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runCli } from '../../src/cli/run.js';
import { formatChecks, type CheckResult } from '../../src/check/result.js';
import { runChecks } from '../../src/check/run-checks.js';
import {
  resolveControllerConfig,
  type ControllerConfig,
  type ControllerConfigInput,
} from '../../src/controller/config.js';
import type { Controller } from '../../src/controller/controller.js';
import { ForwarderConfig } from '../../src/forwarder/config.js';
import { startForwarder, type Forwarder } from '../../src/forwarder/forwarder.js';
import { startKubesim, type Kubesim } from '../../src/kubesim/index.js';
import { silentLogger } from '../../src/log/logger.js';
import { OPERATOR_NS, startEnv, type ControllerEnv } from '../controller/env.js';
import { ACME_AUTHTOKEN, ACME_KEY } from '../helpers/mock-api.js';
import { captured } from '../helpers/capture-io.js';
import { api } from '../kubesim/helpers.js';
import { waitFor } from '../kube/helpers.js';

/**
 * `check` against a healthy install (mock management API, kubesim, a running controller that
 * leads and a real forwarder), then against each broken setup: each fails exactly its own line.
 */

let env: ControllerEnv;
let controller: Controller;
let forwarder: Forwarder;
let forwarderUrl: string;

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

function check(cfg: ControllerConfig, more: { sim?: Kubesim; token?: string; forwarderUrl?: string } = {}) {
  return runChecks({
    config: cfg,
    kubeConfig: (more.sim ?? env.sim).kubeConfig(more.token),
    forwarderUrls: [more.forwarderUrl ?? forwarderUrl],
    forwarderSelector: 'app.kubernetes.io/component=forwarder',
    timeoutMs: 5_000,
  });
}

beforeAll(async () => {
  env = await startEnv();
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
}, 90_000);

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
    ])
      expect(ids).toContain(id);
    expect(ids.filter((id) => id.startsWith('cluster.rbac.')).length).toBe(5);
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
    const sim = await startKubesim({ initialNamespaces: ['default', OPERATOR_NS] });
    try {
      const stale = new Date(Date.now() - 120_000).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
      const r = await api(sim, 'POST', `/apis/coordination.k8s.io/v1/namespaces/${OPERATOR_NS}/leases`, {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name: 'endpoint-binder-controller' },
        spec: {
          holderIdentity: 'gone-replica',
          leaseDurationSeconds: 15,
          renewTime: stale,
          acquireTime: stale,
        },
      });
      expect(r.status).toBe(201);
      const results = await check(config(), { sim });
      expect(failed(results)).toEqual(['cluster.lease']);
      expect(results.find((r) => r.id === 'cluster.lease')!.hint).toContain('gone-replica');
    } finally {
      await sim.stop();
    }
  });

  it('an RBAC rule removed fails exactly the line of that permission', async () => {
    const now = new Date().toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
    const sim = await startKubesim({
      initialNamespaces: ['default', OPERATOR_NS],
      tokens: [
        {
          token: 'controller-sa-token',
          user: 'system:serviceaccount:endpoint-binder:endpoint-binder-controller',
          // The chart's controller rules without `events`.
          rules: [
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
          ],
        },
      ],
    });
    try {
      await api(sim, 'POST', `/apis/coordination.k8s.io/v1/namespaces/${OPERATOR_NS}/leases`, {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name: 'endpoint-binder-controller' },
        spec: { holderIdentity: 'replica-a', leaseDurationSeconds: 3600, renewTime: now, acquireTime: now },
      });
      const results = await check(config(), { sim, token: 'controller-sa-token' });
      expect(failed(results), formatChecks(results)).toEqual(['cluster.rbac.events.create-patch']);
      expect(results.find((r) => r.id === 'cluster.rbac.events.create-patch')!.hint).toContain(
        'system:serviceaccount:endpoint-binder:endpoint-binder-controller may not create, patch events',
      );
    } finally {
      await sim.stop();
    }
  });

  it('runs as `endpoint-binder check` with a kubeconfig file: ✓ lines, exit 0; -o json; exit 1 on a failure', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'eb-check-'));
    const kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(kubeconfig, env.sim.kubeConfig().exportConfig());
    vi.stubEnv('ENDPOINT_BINDER_API_KEY', ACME_KEY);
    const argv = [
      'check',
      '--api-url',
      env.mock.url,
      '--operator-namespace',
      OPERATOR_NS,
      '--kubeconfig',
      kubeconfig,
      '--forwarder-url',
      forwarderUrl,
    ];
    try {
      let io = captured();
      expect(await runCli(argv)).toBe(0);
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
