import { defineConfig } from 'vitest/config';
import { budget, timeFactor, TEST_TIME_FACTOR_ENV } from './test/helpers/budget.js';

/**
 * `npm run test:real`: the real-API-server tier (test/real/). One control plane (etcd,
 * kube-apiserver, kube-controller-manager built by `npm run control-plane:build`) is started for
 * the whole run by test/real/global-setup.ts; files share it and keep to namespaces of their own.
 * Without the binaries everything skips with the reason; REAL_CLUSTER_REQUIRED=1 makes that a
 * failure. Two workers: the control plane itself needs the machine's other core.
 */
export default defineConfig({
  test: {
    include: ['test/real/**/*.real.ts'],
    environment: 'node',
    globalSetup: ['test/real/global-setup.ts'],
    maxWorkers: 2,
    env: { [TEST_TIME_FACTOR_ENV]: String(timeFactor()) },
    testTimeout: budget(120_000),
    hookTimeout: budget(300_000),
    reporters: ['default', './test/reporters/summary-line.ts'],
  },
});
