import { describe, it } from 'vitest';
import { kindPreflight, startKindTarget } from './kind.js';
import { defineScenario } from './scenario.js';

/** `npm run test:e2e`: the scenario on a kind cluster, or a printed reason why it cannot run here. */
const preflight = await kindPreflight();

if ('skip' in preflight) {
  process.stdout.write(`kind e2e skipped: ${preflight.skip}\n`);
  describe('kind e2e', () => {
    it.skip(`skipped: ${preflight.skip}`, () => undefined);
  });
} else {
  const { tools } = preflight;
  defineScenario('endpoint-binder on kind', () => startKindTarget(tools));
}
