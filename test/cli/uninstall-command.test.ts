import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { runCli } from '../../src/cli/run.js';
import { UNINSTALLED_AT_ANNOTATION } from '../../src/controller/uninstall.js';
import { KubeClient, kinds } from '../../src/kube/index.js';
import { startKubesim, type Kubesim } from '../../src/kubesim/index.js';
import { captured } from '../helpers/capture-io.js';

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
  it('runs the retain policy even when the selector in the config does not compile', async () => {
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
  }, 60_000);
});
