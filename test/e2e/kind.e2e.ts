import { startClusterTarget } from './cluster-target.js';
import { kindPreflight, startKind } from './kind.js';
import { skipOrFail } from './preflight.js';
import { defineScenario } from './scenario.js';

/** `npm run test:e2e:kind`: the scenario on a kind cluster, or a printed reason why it cannot run here. */
const preflight = await kindPreflight();

if ('skip' in preflight) {
  skipOrFail('kind', preflight.skip);
} else {
  const { tools } = preflight;
  defineScenario('endpoint-binder on kind', () =>
    startClusterTarget(tools, (work) => startKind(tools, work)),
  );
}
