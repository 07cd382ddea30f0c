import { describe } from 'vitest';
import { defineFidelitySuite } from '../fidelity/suite.js';
import { useKubesimServer } from '../fidelity/use-server.js';

/** The fidelity suite (test/fidelity) against kubesim; test/real/fidelity.real.ts runs it against kube-apiserver. */
describe('fidelity: kubesim', () => {
  defineFidelitySuite(useKubesimServer());
});
