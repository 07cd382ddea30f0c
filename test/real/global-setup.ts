import type { TestProject } from 'vitest/node';
import { locateControlPlane, realClusterRequired } from '../helpers/control-plane/binaries.js';
import {
  startControlPlane,
  type ControlPlane,
  type ControlPlaneInfo,
} from '../helpers/control-plane/control-plane.js';
import { REAL_CLUSTER_USERS } from '../helpers/control-plane/users.js';

/**
 * The real-API-server tier's one control plane, shared by every test file of `npm run test:real`
 * (each file works in namespaces of its own). Without the binaries the tier is skipped with the
 * reason, or fails under REAL_CLUSTER_REQUIRED=1 (CI).
 */
declare module 'vitest' {
  export interface ProvidedContext {
    controlPlane: ControlPlaneInfo | { skip: string };
  }
}

let running: ControlPlane | undefined;

export async function setup(project: TestProject): Promise<void> {
  const found = locateControlPlane();
  if ('skip' in found) {
    if (realClusterRequired()) throw new Error(`REAL_CLUSTER_REQUIRED=1: ${found.skip}`);
    console.log(`[real cluster] skipped: ${found.skip}`);
    project.provide('controlPlane', { skip: found.skip });
    return;
  }
  const started = Date.now();
  running = await startControlPlane({ bin: found.bin, users: REAL_CLUSTER_USERS });
  console.log(
    `[real cluster] ${running.version} up in ${Date.now() - started} ms at ${running.url} (logs: ${running.dir})`,
  );
  const { url, caPem, adminToken, userTokens, version, dir } = running;
  project.provide('controlPlane', { url, caPem, adminToken, userTokens, version, dir });
}

export async function teardown(): Promise<void> {
  await running?.stop();
}
