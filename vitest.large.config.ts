import { defineConfig } from 'vitest/config';
import { budget, timeFactor, TEST_TIME_FACTOR_ENV } from './test/helpers/budget.js';

/**
 * The scale scenarios: thousands of endpoints, run by `npm run test:large` one file at a time, so
 * the scenario, not the other files beside it, decides its timings (`npm test` leaves them out;
 * `.ci/run` runs this tier after `npm test`). Moved here, not weakened: each asserts what it did in
 * the default suite.
 */
export const LARGE_FILES = [
  'test/controller/large-first-sync.test.ts',
  'test/controller/status-observed-large.test.ts',
  'test/controller/large-record.test.ts',
];

export default defineConfig({
  test: {
    include: LARGE_FILES,
    environment: 'node',
    env: { [TEST_TIME_FACTOR_ENV]: String(timeFactor()), EB_LARGE_SYNC: '1' },
    fileParallelism: false,
    maxWorkers: 1,
    testTimeout: budget(30_000),
    hookTimeout: budget(30_000),
    reporters: ['default', './test/reporters/summary-line.ts'],
  },
});
