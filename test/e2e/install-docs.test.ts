import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { AppsV1Api, CoreV1Api } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { resolveControllerConfig } from '../../src/controller/config.js';
import { startKubesim, type Kubesim } from '../../src/kubesim/index.js';
import { k8sTool } from '../helpers/k8s-tools.js';
import { exec } from './exec.js';
import { blocksUnder, codeBlocks } from './install-docs.js';
import { playHookJobs, type HookRun } from './kubesim-jobs.js';
import { budget } from '../helpers/budget.js';

/**
 * docs/install.md, typed as a person would: its shell blocks run verbatim in bash, with the real
 * helm and kubectl on the PATH and a kubeconfig for kubesim, from a directory laid out like a
 * checkout (./charts/endpoint-binder, ./deploy, and my-values.yaml from the page). Each block
 * gets an empty cluster. Then the cluster holds what the page promises: the selector exactly as
 * written, the credentials where it says.
 */

const helmTool = k8sTool('helm');
const kubectlTool = k8sTool('kubectl');
const skip = 'skip' in helmTool ? helmTool.skip : 'skip' in kubectlTool ? kubectlTool.skip : undefined;
if (skip) process.stdout.write(`docs/install.md tests skipped: ${skip}\n`);

const PAGE = readFileSync(resolve('docs/install.md'), 'utf8');
const API_KEY = 'docs-api-key-0001';
const AUTHTOKEN = 'docs-authtoken-0001';

let sim: Kubesim | undefined;
let hookRuns: HookRun[] = [];
let dir: string | undefined;
afterEach(async () => {
  hookRuns = [];
  await sim?.stop();
  sim = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

/** Runs one block of the page in bash against a new kubesim; fails with the block's output. */
async function runBlock(block: string, files: Record<string, string> = {}): Promise<Kubesim> {
  if (skip) throw new Error(skip);
  dir = mkdtempSync(join(tmpdir(), 'eb-install-docs-'));
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  symlinkSync((helmTool as { path: string }).path, join(bin, 'helm'));
  symlinkSync((kubectlTool as { path: string }).path, join(bin, 'kubectl'));
  const checkout = join(dir, 'checkout');
  mkdirSync(checkout);
  symlinkSync(resolve('charts'), join(checkout, 'charts'));
  symlinkSync(resolve('deploy'), join(checkout, 'deploy'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(checkout, name), text);
  sim = await startKubesim({ tls: true });
  const kubeconfig = join(dir, 'kubeconfig');
  await sim.writeKubeconfig(kubeconfig);
  // The cluster's Job controller for the chart's pre-install hook (the config check).
  let finished = false;
  const hooks = playHookJobs({
    sim,
    namespace: 'endpoint-binder',
    phase: 'pre-install',
    workDir: dir,
    loopbackArgs: () => [],
    done: () => finished,
    onRun: (run) => hookRuns.push(run),
  });
  const r = await exec('bash', ['-euo', 'pipefail', '-c', block], {
    cwd: checkout,
    timeoutMs: 120_000,
    env: {
      PATH: `${bin}:${process.env['PATH'] ?? ''}`,
      HOME: dir,
      HELM_CACHE_HOME: join(dir, 'helm-cache'),
      HELM_CONFIG_HOME: join(dir, 'helm-config'),
      HELM_DATA_HOME: join(dir, 'helm-data'),
      KUBECONFIG: kubeconfig,
      API_KEY,
      AUTHTOKEN,
    },
  });
  finished = true;
  await hooks;
  if (r.code !== 0) throw new Error(`the block exited ${r.code}:\n${block}\n${r.stderr}${r.stdout}`);
  return sim;
}

async function controllerConfig(s: Kubesim, configMap: string) {
  const cm = await s
    .kubeConfig()
    .makeApiClient(CoreV1Api)
    .readNamespacedConfigMap({ namespace: 'endpoint-binder', name: configMap });
  const r = resolveControllerConfig(parseYaml(cm.data?.['controller.yaml'] ?? ''), {
    ENDPOINT_BINDER_API_KEY: 'k',
  });
  if (!r.ok) throw new Error(r.errors.join('\n'));
  return r.config;
}

async function secretData(s: Kubesim, name: string): Promise<Record<string, string>> {
  const secret = await s
    .kubeConfig()
    .makeApiClient(CoreV1Api)
    .readNamespacedSecret({ namespace: 'endpoint-binder', name });
  return Object.fromEntries(
    Object.entries(secret.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()]),
  );
}

async function apiKeySecretOf(s: Kubesim, deployment: string): Promise<string | undefined> {
  const d = await s
    .kubeConfig()
    .makeApiClient(AppsV1Api)
    .readNamespacedDeployment({ namespace: 'endpoint-binder', name: deployment });
  return d.spec?.template.spec?.containers[0]?.env?.find((e) => e.name === 'ENDPOINT_BINDER_API_KEY')
    ?.valueFrom?.secretKeyRef?.name;
}

describe('docs/install.md code blocks', () => {
  it('finds the blocks the tests below run', () => {
    const helmBlocks = blocksUnder(PAGE, 'With Helm', 'sh');
    expect(helmBlocks).toHaveLength(2);
    expect(helmBlocks[0]).toContain('helm install endpoint-binder ./charts/endpoint-binder');
    expect(blocksUnder(PAGE, 'With Helm', 'yaml')[0]).toMatch(/^# my-values\.yaml\n/);
    expect(codeBlocks('# a\n```sh\nx\n```\n## b\n```yaml\ny: 1\n```\n')).toEqual([
      { heading: 'a', lang: 'sh', text: 'x\n' },
      { heading: 'b', lang: 'yaml', text: 'y: 1\n' },
    ]);
  });
});

describe.skipIf(skip !== undefined)('docs/install.md, run verbatim with the real helm into kubesim', () => {
  it(
    'the first command installs, with the selector exactly as typed (commas and quotes included)',
    { timeout: budget(180_000) },
    async () => {
      const s = await runBlock(blocksUnder(PAGE, 'With Helm', 'sh')[0]!);
      const cfg = await controllerConfig(s, 'endpoint-binder-controller');
      expect(cfg.bindings.endpointSelector).toBe('endpoint.namespace in ["prod", "stage"]');
      expect(cfg.api.baseUrl).toBe('https://api.example.com');
      expect(await secretData(s, 'endpoint-binder-credentials')).toEqual({ API_KEY, AUTHTOKEN });
      expect(await apiKeySecretOf(s, 'endpoint-binder-controller')).toBe('endpoint-binder-credentials');
      // The config check ran before anything was installed, and passed.
      expect(hookRuns.map((h) => [h.job, h.code])).toEqual([['endpoint-binder-config-check', 0]]);
    },
  );

  it(
    'the Secret-and-values-file install uses the Secret made by hand and the multi-line selector',
    { timeout: budget(180_000) },
    async () => {
      const values = blocksUnder(PAGE, 'With Helm', 'yaml')[0]!;
      const s = await runBlock(blocksUnder(PAGE, 'With Helm', 'sh')[1]!, { 'my-values.yaml': values });
      const cfg = await controllerConfig(s, 'endpoint-binder-controller');
      const expected = (parseYaml(values) as { bindings: { endpointSelector: string } }).bindings;
      expect(cfg.bindings.endpointSelector).toBe(expected.endpointSelector.trim());
      expect(cfg.bindings.endpointSelector).toContain('!endpoint.metadata.contains("skip")');
      expect(cfg.bindings.serviceLabels).toEqual({ team: 'platform' });
      expect(await secretData(s, 'endpoint-binder-credentials')).toEqual({ API_KEY, AUTHTOKEN });
      expect(await apiKeySecretOf(s, 'endpoint-binder-controller')).toBe('endpoint-binder-credentials');
      // The chart rendered no Secret of its own beside the one made by hand.
      const secrets = await s
        .kubeConfig()
        .makeApiClient(CoreV1Api)
        .listNamespacedSecret({ namespace: 'endpoint-binder' });
      // (helm's own release record is a Secret too: type helm.sh/release.v1.)
      const notHelms = secrets.items.filter((x) => x.type !== 'helm.sh/release.v1');
      expect(notHelms.map((x) => x.metadata?.name)).toEqual(['endpoint-binder-credentials']);
    },
  );

  it(
    'the plain-manifests install applies deploy/ with the API URL replaced',
    { timeout: budget(180_000) },
    async () => {
      const s = await runBlock(blocksUnder(PAGE, 'With plain manifests (deploy/)', 'sh')[0]!);
      const cfg = await controllerConfig(s, 'endpoint-binder-controller');
      expect(cfg.api.baseUrl).toBe('https://api.your-provider.example');
      expect(await apiKeySecretOf(s, 'endpoint-binder-controller')).toBe('endpoint-binder-credentials');
    },
  );
});
