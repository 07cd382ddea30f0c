import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Where bench/support/memory-probe.ts in process `pid` reads its request and writes its answer. */
export function memoryProbePaths(pid: number): { base: string; request: string; answer: string } {
  const base = join(tmpdir(), `endpoint-binder-memory-probe-${pid}`);
  return { base, request: `${base}.request.json`, answer: `${base}.answer.json` };
}
