import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { demoCommands } from '../src/cli/demo-command.js';
import { runCli } from '../src/cli/run.js';
import { startDemo, type Demo } from '../src/demo/demo.js';
import { captured } from './helpers/capture-io.js';
import { budget } from './helpers/budget.js';

/**
 * The `check` and `status` lines `npm start` prints run as printed (issue #29 item 5: the README
 * pointed at a config.yaml that did not exist and a bare `status` that asked a port where nothing
 * listened): the export lines set the environment, the `npx endpoint-binder …` lines run through
 * the CLI, and check passes every line, its rights lines reviewing the controller's own
 * ServiceAccount (the demo's controller runs as it, with the chart's rules).
 */

let demo: Demo;
beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'eb-demo-check-'));
  demo = await startDemo({ kubeconfigPath: join(dir, 'kubeconfig.yaml') });
  await demo.controller.caughtUp();
}, budget(60_000));
afterAll(async () => {
  vi.unstubAllEnvs();
  await demo?.stop();
}, budget(30_000));

/** Applies the printed `export` lines; returns the `npx endpoint-binder` lines as argv. */
function printed(): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const line of demoCommands(demo).map((l) => l.trim())) {
    if (line.startsWith('export '))
      for (const pair of line.slice('export '.length).split(' ')) {
        const [k, v] = pair.split('=');
        vi.stubEnv(k!, v);
      }
    if (line.startsWith('npx endpoint-binder ')) {
      const argv = line.slice('npx endpoint-binder '.length).split(' ');
      out[argv[0]!] = argv;
    }
  }
  return out;
}

describe('npm start prints runnable check and status lines', () => {
  it(
    'check, as printed, passes every line and reviews the controller account',
    { timeout: budget(60_000) },
    async () => {
      const lines = printed();
      expect(Object.keys(lines).sort()).toEqual(['check', 'status']);
      let io = captured();
      let code = 1;
      // The leader may still be writing its first projections: a few tries, each a whole check.
      for (let i = 0; i < 20; i++) {
        vi.restoreAllMocks();
        io = captured();
        code = await runCli(lines['check']!);
        if (code === 0) break;
        await new Promise((r) => setTimeout(r, 500));
      }
      vi.restoreAllMocks();
      expect(code, io.out() + io.err()).toBe(0);
      expect(io.out()).toMatch(/All \d+ checks passed\./);
      expect(io.out()).toContain('system:serviceaccount:endpoint-binder:endpoint-binder-controller may ');
    },
  );

  it(
    'status, as printed, reads this controller (the samples are created by the script, not here)',
    { timeout: budget(30_000) },
    async () => {
      const lines = printed();
      const io = captured();
      const code = await runCli(lines['status']!);
      vi.restoreAllMocks();
      expect(code, io.err()).toBe(0);
      expect(io.out()).toContain('install: endpoint-binder in endpoint-binder');
      expect(io.out()).toContain('No cluster-bound endpoints in the account.');
    },
  );
});
