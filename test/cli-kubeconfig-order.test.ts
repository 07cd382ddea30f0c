import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkCommand } from '../src/cli/check-command.js';
import { controllerCommand } from '../src/cli/controller-command.js';
import { forwarderCommand } from '../src/cli/forwarder-command.js';
import { cliKubeConfig } from '../src/cli/kube-source.js';
import { uninstallCommand } from '../src/cli/uninstall-command.js';

/**
 * Docs disagreement 11 of #29: every command's --help states the kubeconfig search order the
 * code follows (KUBECONFIG, ~/.kube/config, then the in-cluster account), and the code does.
 */

const ORDER = '(default: KUBECONFIG, ~/.kube/config, then in-cluster)';
const work = mkdtempSync(join(tmpdir(), 'eb-kubeconfig-order-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function kubeconfig(path: string, server: string): string {
  writeFileSync(
    path,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'c', cluster: { server } }],
      users: [{ name: 'u', user: { token: 't' } }],
      contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
      'current-context': 'x',
    }),
  );
  return path;
}

describe('--kubeconfig default order', () => {
  it.each([
    ['controller', controllerCommand],
    ['check', checkCommand],
    ['uninstall', uninstallCommand],
    ['forwarder', forwarderCommand],
  ])('%s --help states the order the code uses', (_name, command) => {
    const line = command.usage.split('\n').find((l) => l.trimStart().startsWith('--kubeconfig'));
    expect(line, `--kubeconfig line of:\n${command.usage}`).toContain(ORDER);
  });

  it('KUBECONFIG wins over ~/.kube/config, which is used without it', () => {
    const home = join(work, 'home');
    mkdirSync(join(home, '.kube'), { recursive: true });
    kubeconfig(join(home, '.kube', 'config'), 'https://home.example:6443');
    const fromEnv = kubeconfig(join(work, 'env.kubeconfig'), 'https://env.example:6443');
    const saved = process.env['KUBECONFIG'];
    const savedHome = process.env['HOME'];
    try {
      // client-node reads both from the process environment.
      process.env['HOME'] = home;
      process.env['KUBECONFIG'] = fromEnv;
      expect(cliKubeConfig({}, process.env, home).getCurrentCluster()?.server).toBe(
        'https://env.example:6443',
      );
      delete process.env['KUBECONFIG'];
      expect(cliKubeConfig({}, process.env, home).getCurrentCluster()?.server).toBe(
        'https://home.example:6443',
      );
    } finally {
      if (saved === undefined) delete process.env['KUBECONFIG'];
      else process.env['KUBECONFIG'] = saved;
      if (savedHome === undefined) delete process.env['HOME'];
      else process.env['HOME'] = savedHome;
    }
  });
});
