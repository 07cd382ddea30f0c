import { defineConfig } from 'vitest/config';
import { budget, timeFactor, TEST_TIME_FACTOR_ENV } from './test/helpers/budget.js';
import SlowFirstSequencer from './test/slow-first-sequencer.js';
import { LARGE_FILES } from './vitest.large.config.js';

/**
 * `npm test`: the whole default suite (docs/testing.md lists the tiers and their times). The scale
 * scenarios (LARGE_FILES) run in `npm run test:large` instead, alone; `.ci/run` runs both.
 * Every wall-clock budget, these timeouts included, is scaled by one factor computed here once
 * (test/helpers/budget.ts: TEST_TIME_FACTOR, else the load average per core) and handed to the
 * workers, so a loaded machine stretches every budget alike.
 */
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['**/node_modules/**', ...LARGE_FILES],
    environment: 'node',
    env: { [TEST_TIME_FACTOR_ENV]: String(timeFactor()) },
    testTimeout: budget(30_000),
    hookTimeout: budget(30_000),
    // Integration tests bind real loopback ports and mostly wait on I/O and child processes: four
    // workers keep a 2-core machine busy without starving it.
    maxWorkers: 4,
    sequence: { sequencer: SlowFirstSequencer },
    reporters: ['default', './test/reporters/summary-line.ts'],
  },
});
