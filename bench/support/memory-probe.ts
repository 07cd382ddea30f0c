/**
 * Bench only: preloaded with `node --expose-gc --import ./bench/support/memory-probe.ts` into a
 * process that bench/idle-memory.ts measures (the forwarder CLI, the floor roles). Nothing in
 * src/ imports it, and the CLI and the chart never load it, so production has no way to trigger a
 * GC or a heap snapshot.
 *
 * On SIGUSR2: read the request file (`memoryProbePaths(pid).request`, JSON `{ seq, snapshot }`),
 * run full GCs, record process.memoryUsage(), write a heap snapshot if asked (after the usage, so
 * its own allocations are not counted), then write the answer file atomically.
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { writeHeapSnapshot } from 'node:v8';
import { z } from 'zod';
import { memoryProbePaths } from './memory-probe-paths.js';

// tsx (loaded before this probe) turns source maps on, and Node then keeps each module's source
// map data (lineLengths…) on the heap, growing as stack traces are made; the image runs node
// without them. The forwarder's modules load after this line.
process.setSourceMapsEnabled(false);

const Request = z.object({ seq: z.number().int(), snapshot: z.boolean() });

function fullGc(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('memory-probe: run node with --expose-gc');
  // Several passes: weak callbacks and finalizers of one pass free more in the next.
  for (let i = 0; i < 4; i++) gc();
}

process.on('SIGUSR2', () => {
  const paths = memoryProbePaths(process.pid);
  const req = Request.parse(JSON.parse(readFileSync(paths.request, 'utf8')));
  fullGc();
  const usage = process.memoryUsage();
  const snapshot = req.snapshot ? writeHeapSnapshot(`${paths.base}-${req.seq}.heapsnapshot`) : undefined;
  writeFileSync(`${paths.answer}.tmp`, JSON.stringify({ seq: req.seq, usage, snapshot }));
  renameSync(`${paths.answer}.tmp`, paths.answer);
});
