import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { k8sTool } from '../helpers/k8s-tools.js';
import { exec } from './exec.js';
import { blocksUnder } from './install-docs.js';
import { budget } from '../helpers/budget.js';

/**
 * docs/install.md "Try it on your laptop", typed as a person would: its shell blocks run verbatim
 * in one bash, from a directory laid out like a checkout after `npm ci`, with the real helm and
 * kubectl on the PATH and nothing else running: the mock management API and `endpoint-binder
 * kubesim --workloads` started by the page's first block, the chart installed by the second (its
 * config-check hook run by kubesim's Job controller, the Deployments' pods by its kubelet), and the
 * third's refused install, its cause, and the `helm uninstall` that recovers from it (before
 * issue #29: the install hung 5 minutes on a hook no one ran; the uninstall of a refused install
 * failed on a hook mounting objects that install never created).
 */

const helmTool = k8sTool('helm');
const kubectlTool = k8sTool('kubectl');
const skip = 'skip' in helmTool ? helmTool.skip : 'skip' in kubectlTool ? kubectlTool.skip : undefined;
if (skip) process.stdout.write(`docs/install.md laptop tests skipped: ${skip}\n`);

const PAGE = readFileSync(resolve('docs/install.md'), 'utf8');
const HEADING = 'Try it on your laptop';

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

/** A checkout after `npm ci`: the repository's files, by symlink, in a directory of its own. */
function checkout(): { root: string; bin: string } {
  dir = mkdtempSync(join(tmpdir(), 'eb-install-laptop-'));
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  symlinkSync((helmTool as { path: string }).path, join(bin, 'helm'));
  symlinkSync((kubectlTool as { path: string }).path, join(bin, 'kubectl'));
  const root = join(dir, 'checkout');
  mkdirSync(root);
  for (const name of [
    'charts',
    'deploy',
    'bin',
    'src',
    'dist',
    'node_modules',
    'package.json',
    'tsconfig.json',
  ])
    symlinkSync(resolve(name), join(root, name));
  return { root, bin };
}

/** kubesim's log and every pod's, their tails: what a failure message needs. */
function podLogs(tmp: string): string {
  const tail = (path: string): string => {
    try {
      return readFileSync(path, 'utf8').slice(-1500);
    } catch {
      return '(none)';
    }
  };
  const out = [`kubesim: ${tail(join(tmp, 'kubesim.log'))}`, `mock-api: ${tail(join(tmp, 'mock-api.log'))}`];
  const pods = join(tmp, 'kubesim-pods', 'endpoint-binder');
  let names: string[] = [];
  try {
    names = readdirSync(pods);
  } catch {
    // no pod ran
  }
  for (const name of names) out.push(`${name}: ${tail(join(pods, name, 'log'))}`);
  return out.join('\n');
}

describe('docs/install.md "Try it on your laptop"', () => {
  it('has the three blocks the test below runs', () => {
    const blocks = blocksUnder(PAGE, HEADING, 'sh');
    expect(blocks).toHaveLength(3);
    expect(blocks[0]).toContain('endpoint-binder kubesim --workloads');
    expect(blocks[1]).toContain('helm install endpoint-binder ./charts/endpoint-binder');
    expect(blocks[2]).toContain('helm uninstall endpoint-binder');
  });
});

describe.skipIf(skip !== undefined)('docs/install.md "Try it on your laptop", verbatim', () => {
  it(
    'installs, refuses a bad selector naming it, and recovers with helm uninstall',
    { timeout: budget(360_000) },
    async () => {
      const { root, bin } = checkout();
      const [start, install, refused] = blocksUnder(PAGE, HEADING, 'sh');
      // The page's processes end with the script, whatever happens: with job control each is a
      // process group (npm, its shell, node), ended whole as the page's `kill %1 %2` does.
      const script = [
        // One stream, in order: helm's errors next to the commands' output.
        'exec 2>&1',
        'set -m',
        "trap 'for p in $(jobs -p); do kill -- -$p 2>/dev/null; done; wait' EXIT",
        start,
        'echo "=== install"',
        install,
        'echo "=== refused"',
        refused,
        'echo "=== reinstall"',
        // After the recovery, the first install works again.
        install,
        'helm uninstall endpoint-binder -n endpoint-binder',
      ].join('\n');
      const r = await exec('bash', ['-euo', 'pipefail', '-c', script], {
        cwd: root,
        timeoutMs: 300_000,
        env: {
          PATH: `${bin}:${process.env['PATH'] ?? ''}`,
          HOME: dir!,
          HELM_CACHE_HOME: join(dir!, 'helm-cache'),
          HELM_CONFIG_HOME: join(dir!, 'helm-config'),
          HELM_DATA_HOME: join(dir!, 'helm-data'),
        },
      });
      const all = `${r.stdout}\n${r.stderr}`;
      const logs = podLogs(join(root, '.tmp'));
      expect(r.code, `${all}\n--- logs:\n${logs}`).toBe(0);
      const [, afterInstall = ''] = all.split('=== install');
      const [installed = '', afterRefused = ''] = afterInstall.split('=== refused');
      expect(installed).toContain('STATUS: deployed');
      expect(installed).toMatch(/deployment "endpoint-binder-controller" successfully rolled out/);
      const [refusal = '', reinstall = ''] = afterRefused.split('=== reinstall');
      // helm's own words, then the cause with its caret, from the page's command.
      expect(refusal).toContain('job endpoint-binder-config-check failed: BackoffLimitExceeded');
      expect(refusal).toContain('refused, as it should be');
      // The Event in the release's namespace names the setting and the fix (#29 item 2).
      expect(refusal).toMatch(
        /The config check refused these values: bindings\.endpointSelector: invalid endpoint selector[^\n]*Fix: correct that value and run helm upgrade --install/,
      );
      expect(refusal).toContain('bindings.endpointSelector: invalid endpoint selector');
      expect(refusal).toMatch(/\n\s*\^/);
      expect(refusal).toContain('release "endpoint-binder" uninstalled');
      expect(reinstall).toContain('STATUS: deployed');
      expect(reinstall).toContain('release "endpoint-binder" uninstalled');
    },
  );
});
