import { describe } from 'vitest';
import { k8sTool } from '../helpers/k8s-tools.js';
import { realCluster } from '../helpers/control-plane/use.js';
import { startRealTarget } from '../e2e/real-target.js';
import { defineScenario } from '../e2e/scenario.js';

/**
 * The e2e scenario (test/e2e/scenario.ts, the same body kind, k3s and kubesim run) on the real
 * control plane: the real helm installs the chart, kube-apiserver enforces its RBAC and admission
 * fence, kube-controller-manager runs its hook Jobs and Deployments, the node agent runs the pods.
 */
const rc = realCluster();
const helm = k8sTool('helm');
const skip = 'skip' in rc ? rc.skip : 'skip' in helm ? helm.skip : undefined;
if (skip) console.log(`[real cluster] e2e.real.ts skipped: ${skip}`);

describe.skipIf(skip !== undefined)('e2e on a real kube-apiserver', () => {
  if ('skip' in rc) return;
  defineScenario(
    'the e2e scenario on a real kube-apiserver with the real helm',
    () => startRealTarget(rc.cluster, { portWindow: 0 }),
    {
      stepTimeoutMs: 90_000,
      setupTimeoutMs: 120_000,
    },
  );
});
