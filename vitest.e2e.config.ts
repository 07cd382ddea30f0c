import { defineConfig } from 'vitest/config';

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
    testTimeout: 10 * 60_000,
    hookTimeout: 30 * 60_000,
    reporters: ['default'],
  },
});
