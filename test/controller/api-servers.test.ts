import { startKubesim } from '../../src/kubesim/index.js';
import { defineControllerSuite } from './api-server-suite.js';

/** The API-server suite against kubesim; test/e2e/k3s-controller.e2e.ts runs it against k3s. */
defineControllerSuite('the controller against kubesim', async () => {
  const sim = await startKubesim({ bookmarkIntervalMs: 500 });
  return { kubeConfig: sim.kubeConfig(), close: () => sim.stop() };
});
