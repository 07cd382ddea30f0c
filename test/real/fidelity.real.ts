import { describe } from 'vitest';
import { realCluster } from '../helpers/control-plane/use.js';
import { defineFidelitySuite } from '../fidelity/suite.js';
import { useRealServer } from '../fidelity/use-server.js';

/** The fidelity suite (test/fidelity) against the real kube-apiserver; test/kubesim/fidelity.test.ts runs it against kubesim. */
const rc = realCluster();
if ('skip' in rc) {
  console.log(`[real cluster] fidelity.real.ts skipped: ${rc.skip}`);
  describe.skip('fidelity: kube-apiserver', () => {});
} else {
  describe('fidelity: kube-apiserver', () => {
    defineFidelitySuite(useRealServer(rc.cluster));
  });
}
