import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ENDPOINT_URL_ANNOTATION } from '../../src/binding/identity.js';
import {
  ORPHANED_ANNOTATION,
  ROLE_ALIAS,
  ROLE_INTERNAL,
  ROLE_LABEL,
  ownershipLabels,
} from '../../src/binding/ownership/index.js';
import { runCli } from '../../src/cli/run.js';
import { failureLines } from '../../src/cli/uninstall-command.js';
import { UNINSTALLED_AT_ANNOTATION } from '../../src/controller/uninstall.js';
import { KubeClient, kinds } from '../../src/kube/index.js';
import { startKubesim, type Kubesim } from '../../src/kubesim/index.js';
import { captured } from '../helpers/capture-io.js';
import { budget } from '../helpers/budget.js';

/**
 * `endpoint-binder uninstall` as the chart's pre-delete hook runs it, against kubesim: it must
 * work with whatever config the release holds, so `helm uninstall` always works.
 */

let sim: Kubesim | undefined;
let dir: string | undefined;
afterEach(async () => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
  await sim?.stop();
  sim = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function setup(selector: string): Promise<{ config: string; kubeconfig: string }> {
  sim = await startKubesim({ initialNamespaces: ['default', 'ops'] });
  dir = mkdtempSync(join(tmpdir(), 'eb-uninstall-cli-'));
  const kubeconfig = join(dir, 'kubeconfig');
  await sim.writeKubeconfig(kubeconfig);
  const config = join(dir, 'controller.yaml');
  writeFileSync(
    config,
    JSON.stringify({
      api: { baseUrl: 'http://127.0.0.1:9' },
      releaseName: 'eb',
      operatorNamespace: 'ops',
      bindings: { endpointSelector: selector },
    }),
  );
  return { config, kubeconfig };
}

describe('endpoint-binder uninstall', () => {
  it(
    'runs the retain policy even when the selector in the config does not compile',
    { timeout: budget(60_000) },
    async () => {
      const { config, kubeconfig } = await setup('endpoint.namespace ==');
      vi.stubEnv('ENDPOINT_BINDER_API_KEY', 'k');
      // The controller itself refuses this config, naming the selector...
      const refused = captured();
      expect(await runCli(['controller', '--config', config, '--kubeconfig', kubeconfig])).toBe(2);
      expect(refused.err()).toContain('bindings.endpointSelector');
      vi.restoreAllMocks();
      // ...the uninstall does not need it.
      const io = captured();
      const code = await runCli([
        'uninstall',
        '--config',
        config,
        '--policy',
        'retain',
        '--kubeconfig',
        kubeconfig,
      ]);
      // stderr: only log lines (JSON), no stack; stdout: only the report, one JSON line.
      for (const line of io.err().trim().split('\n'))
        expect(JSON.parse(line)).toMatchObject({ name: 'uninstall', msg: expect.any(String) });
      expect(code).toBe(0);
      expect(io.out().trim().split('\n')).toHaveLength(1);
      expect(JSON.parse(io.out())).toMatchObject({ policy: 'retain', failed: [] });
      const lease = await new KubeClient(sim!.kubeConfig()).get(kinds.lease, 'ops', 'eb-controller');
      // Marked, and released at the end: a new install leads at once.
      expect(lease?.spec?.holderIdentity).toBe('');
      expect(lease?.metadata.annotations?.[UNINSTALLED_AT_ANNOTATION]).toBeTruthy();
    },
  );

  /** One projected endpoint (internal Service in ops naming the alias default/web) and a tenant's Service. */
  async function project(): Promise<KubeClient> {
    const kube = new KubeClient(sim!.kubeConfig());
    const labels = ownershipLabels({ release: 'eb', operatorNamespace: 'ops' });
    await kube.create(kinds.service, {
      metadata: {
        name: 'eb-web',
        namespace: 'ops',
        labels: { ...labels, [ROLE_LABEL]: ROLE_INTERNAL },
        annotations: { [ENDPOINT_URL_ANNOTATION]: 'tcp://web.default:80' },
      },
      spec: { type: 'ClusterIP', ports: [{ name: 'tcp-80', port: 80, targetPort: 30001, protocol: 'TCP' }] },
    });
    await kube.create(kinds.service, {
      metadata: { name: 'web', namespace: 'default', labels: { ...labels, [ROLE_LABEL]: ROLE_ALIAS } },
      spec: { type: 'ExternalName', externalName: 'eb-web.ops.svc.cluster.local' },
    });
    await kube.create(kinds.service, {
      metadata: { name: 'tenant', namespace: 'default' },
      spec: { type: 'ClusterIP', ports: [{ port: 80, protocol: 'TCP' }] },
    });
    return kube;
  }

  it.each(['delete', 'retain'] as const)(
    '--services-only --policy %s handles only the Services: no API key, no Lease, no deregistration',
    { timeout: budget(60_000) },
    async (policy) => {
      const { config, kubeconfig } = await setup('true');
      const kube = await project();
      // No API key in the environment, and the config's API URL is unreachable: any call to the
      // management API (a deregistration) would fail the run.
      vi.stubEnv('ENDPOINT_BINDER_API_KEY', '');
      const io = captured();
      const code = await runCli([
        'uninstall',
        '--services-only',
        '--config',
        config,
        '--policy',
        policy,
        '--kubeconfig',
        kubeconfig,
      ]);
      // stderr: only log lines (JSON), no failure line; stdout: only the report.
      for (const line of io.err().trim().split('\n'))
        expect(JSON.parse(line)).toMatchObject({ name: 'uninstall', msg: expect.any(String) });
      expect(code).toBe(0);
      const report = JSON.parse(io.out().trim().split('\n').pop()!) as Record<string, unknown>;
      const ours = ['default/web', 'ops/eb-web'];
      expect(report).toMatchObject({ policy, failed: [], deregistered: [] });
      expect(
        [...((policy === 'delete' ? report['deleted'] : report['orphaned']) as string[])].sort(),
      ).toEqual(ours);
      for (const [ns, name] of [
        ['default', 'web'],
        ['ops', 'eb-web'],
      ] as const) {
        const svc = await kube.get(kinds.service, ns, name);
        if (policy === 'delete') expect(svc).toBeUndefined();
        else expect(svc?.metadata.annotations?.[ORPHANED_ANNOTATION]).toBeTruthy();
      }
      const tenant = await kube.get(kinds.service, 'default', 'tenant');
      expect(tenant?.metadata.annotations?.[ORPHANED_ANNOTATION]).toBeUndefined();
      // The Lease was neither taken nor created: the controllers keep running.
      expect(await kube.get(kinds.lease, 'ops', 'eb-controller')).toBeUndefined();
    },
  );

  it('prints one human line per Service it could not handle', () => {
    expect(
      failureLines({
        policy: 'delete',
        deleted: [],
        orphaned: [],
        deregistered: [],
        failed: [{ service: 'default/web', error: 'services "web" is forbidden: endpoint-binder fence: …' }],
      }),
    ).toEqual([
      'endpoint-binder uninstall: could not delete Service default/web: services "web" is forbidden: endpoint-binder fence: …',
    ]);
    expect(
      failureLines({
        policy: 'retain',
        deleted: [],
        orphaned: [],
        deregistered: [],
        failed: [{ service: 'ops/eb-web', error: 'timeout' }],
      }),
    ).toEqual(['endpoint-binder uninstall: could not mark orphaned Service ops/eb-web: timeout']);
  });
});
