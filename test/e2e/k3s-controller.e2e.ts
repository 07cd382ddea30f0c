import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { defineControllerSuite } from '../controller/api-server-suite.js';
import { k3sPreflight, startK3s } from './k3s.js';
import { skipOrFail } from './preflight.js';

/**
 * `npm run test:e2e:k3s-controller`: the controller's API-server suite (the one `npm test` runs
 * against kubesim) against a real k3s started by testcontainers: the same test, two API servers.
 * Without Docker it is skipped with the reason (a failure under E2E_REQUIRED=1).
 */
const preflight = await k3sPreflight();

if ('skip' in preflight) {
  skipOrFail('k3s controller', preflight.skip);
} else {
  const { tools } = preflight;
  defineControllerSuite('the controller against k3s', async () => {
    const work = mkdtempSync(join(tmpdir(), 'eb-k3s-controller-'));
    const cluster = await startK3s(tools, work);
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromFile(cluster.kubeconfig);
    return {
      kubeConfig,
      async close() {
        await cluster.close();
        rmSync(work, { recursive: true, force: true });
      },
    };
  });
}
