import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    environment: 'node',
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Integration tests bind real loopback ports; a few workers keep a 2-core machine responsive.
    maxWorkers: 3,
    reporters: ['default', './test/reporters/summary-line.ts'],
  },
});
