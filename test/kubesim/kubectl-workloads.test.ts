import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startKubesim, type Kubesim } from '../../src/kubesim/index.js';
import { k8sTool } from '../helpers/k8s-tools.js';
import { deployment, tinyRunner } from './tiny-pods.js';
import { budget } from '../helpers/budget.js';

/**
 * The real kubectl against kubesim's process-backed workloads: `rollout status` reads the
 * Deployment status kubesim's controller writes, `rollout restart` rolls real processes, `get
 * pods` and `delete pod` see and delete them as on a cluster.
 */
const tool = k8sTool('kubectl');
if ('skip' in tool) process.stdout.write(`kubectl workload tests skipped: ${tool.skip}\n`);

const run = promisify(execFile);
let sim: Kubesim;
let kubeconfig: string;
const { runner, started } = tinyRunner();

async function kubectl(
  args: string[],
  input?: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  if ('skip' in tool) throw new Error(tool.skip);
  const child = run(tool.path, ['--kubeconfig', kubeconfig, '--request-timeout=10s', ...args], {
    timeout: budget(90_000),
  });
  if (input !== undefined) child.child.stdin?.end(input);
  try {
    const { stdout, stderr } = await child;
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : 1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

describe.skipIf('skip' in tool)('kubectl against kubesim process-backed workloads', () => {
  beforeAll(async () => {
    sim = await startKubesim({ tls: true, podRunner: runner, podStopGraceMs: 500 });
    kubeconfig = join(mkdtempSync(join(tmpdir(), 'eb-kubectl-pods-')), 'kubeconfig.yaml');
    await sim.writeKubeconfig(kubeconfig);
  });
  afterAll(async () => {
    await sim.stop();
  });

  it('applies a Deployment, waits for it, restarts it and waits again', async () => {
    const applied = await kubectl(['apply', '-f', '-'], JSON.stringify(deployment('web')));
    expect(applied.stderr).toBe('');
    expect(applied.stdout).toContain('deployment.apps/web created');
    const first = await kubectl(['rollout', 'status', 'deployment/web', '--timeout=60s']);
    expect(first.stdout).toContain('deployment "web" successfully rolled out');
    const pods = await kubectl(['get', 'pods', '-l', 'app=web', '-o', 'name']);
    const before = pods.stdout.trim().split('\n').sort();
    expect(before).toHaveLength(2);
    for (const p of before) expect(p).toMatch(/^pod\/web-[a-z0-9]+-[a-z0-9]{5}$/);

    const restarted = await kubectl(['rollout', 'restart', 'deployment/web']);
    expect(restarted.stdout).toContain('deployment.apps/web restarted');
    const second = await kubectl(['rollout', 'status', 'deployment/web', '--timeout=60s']);
    expect(second.code).toBe(0);
    expect(second.stdout).toContain('deployment "web" successfully rolled out');
    // Once the old pods' processes have exited and their objects are gone: two new pods.
    let after: string[] = [];
    for (let i = 0; i < 100; i++) {
      after = (await kubectl(['get', 'pods', '-l', 'app=web', '-o', 'name'])).stdout
        .trim()
        .split('\n')
        .sort();
      if (after.length === 2 && after.every((p) => !before.includes(p))) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(after).toHaveLength(2);
    expect(after.filter((p) => before.includes(p))).toEqual([]);
    expect(started).toHaveLength(4);
  });

  it('deletes a pod and waits for it as kubectl does', async () => {
    const name =
      (await kubectl(['get', 'pods', '-l', 'app=web', '-o', 'name'])).stdout.trim().split('\n')[0] ?? '';
    const deleted = await kubectl(['delete', name, '--timeout=30s']);
    expect(deleted.code).toBe(0);
    expect(deleted.stdout).toContain(`${name.replace('pod/', 'pod "')}" deleted`);
    const gone = await kubectl(['get', name]);
    expect(gone.stderr).toContain('NotFound');
  });
});
