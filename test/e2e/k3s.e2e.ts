import { startClusterTarget } from './cluster-target.js';
import { k3sPreflight, startK3s } from './k3s.js';
import { skipOrFail } from './preflight.js';
import { defineScenario } from './scenario.js';

/** `npm run test:e2e:k3s`: the scenario on k3s started by testcontainers, or a printed reason why it cannot run here. */
const preflight = await k3sPreflight();

if ('skip' in preflight) {
  skipOrFail('k3s', preflight.skip);
} else {
  const { tools } = preflight;
  defineScenario('endpoint-binder on k3s', () => startClusterTarget(tools, (work) => startK3s(tools, work)));
}
