import { defineConfig } from 'vitest/config';
import SlowFirstSequencer from './test/slow-first-sequencer.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    environment: 'node',
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Integration tests bind real loopback ports and mostly wait on I/O and child processes: four
    // workers keep a 2-core machine busy without starving it (the suite runs in about 90 s).
    maxWorkers: 4,
    sequence: { sequencer: SlowFirstSequencer },
    reporters: ['default', './test/reporters/summary-line.ts'],
  },
});
