import { defineConfig } from 'vitest/config';
import { budget, timeFactor, TEST_TIME_FACTOR_ENV } from './test/helpers/budget.js';

/**
 * `npm run test:e2e`: the end-to-end scenario against a kind cluster (test/e2e/). Needs Docker and
 * kind; without them every test is skipped with the reason printed, and the run passes.
 * One file at a time: the steps share one cluster and build one image.
 */
export default defineConfig({
  test: {
    include: ['test/e2e/**/*.e2e.ts'],
    environment: 'node',
    fileParallelism: false,
    maxWorkers: 1,
    env: { [TEST_TIME_FACTOR_ENV]: String(timeFactor()) },
    testTimeout: budget(10 * 60_000),
    hookTimeout: budget(30 * 60_000),
    reporters: ['default'],
  },
});
