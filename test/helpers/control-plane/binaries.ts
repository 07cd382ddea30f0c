import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

/**
 * Where the real control plane's binaries are (scripts/control-plane/build.sh puts them in the
 * git-ignored .cache/), or why the real-API-server tier cannot run here. `REAL_CLUSTER_REQUIRED=1`
 * (set by .ci/run) turns "not built" into a failure instead of a skip.
 */
export const CONTROL_PLANE_BINARIES = ['etcd', 'kube-apiserver', 'kube-controller-manager'] as const;

export type ControlPlaneBinaries = Record<(typeof CONTROL_PLANE_BINARIES)[number], string>;

export function locateControlPlane(): { bin: ControlPlaneBinaries } | { skip: string } {
  let dir = process.env['CONTROL_PLANE_BIN'];
  if (!dir) {
    try {
      dir = execFileSync('bash', [resolve('scripts/control-plane/build.sh'), '--locate'], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      }).trim();
    } catch {
      return { skip: 'the real control plane is not built here (run `npm run control-plane:build`)' };
    }
  }
  const bin = Object.fromEntries(
    CONTROL_PLANE_BINARIES.map((b) => [b, join(dir, b)]),
  ) as ControlPlaneBinaries;
  const missing = CONTROL_PLANE_BINARIES.filter((b) => !existsSync(bin[b]));
  if (missing.length)
    return { skip: `${missing.join(', ')} missing in ${dir} (run \`npm run control-plane:build\`)` };
  return { bin };
}

/** True when a missing control plane must fail the run (CI), not skip it. */
export function realClusterRequired(): boolean {
  return process.env['REAL_CLUSTER_REQUIRED'] === '1';
}
