/**
 * B's samples of bench/datapath-isolation.ts taken in a process of their own (isolation-roles.ts
 * `sampler`): the driver also runs A's crowd of up to 1,100 clients and the silent upstream, and
 * a timed echo in that event loop measured the driver's own lag behind the crowd's reconnects as
 * much as the forwarder (the control runs, A on a forwarder of its own, missed the target too).
 */
import { spawn } from 'node:child_process';
import { z } from 'zod';
import type { Samples } from './isolation-clients.js';
import { children, onJsonLines } from './spawn-json.js';

const SamplesLine = z.object({
  ms: z.array(z.number()),
  timeline: z.array(z.object({ at: z.number(), ms: z.number() })),
  n: z.number().int(),
  failures: z.array(z.tuple([z.string(), z.number().int()])),
});

export function sampleInOwnProcess(
  port: number,
  source: string,
  n: number,
  gapMs: number,
  timeoutMs: number,
): Promise<Samples> {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      'bench/isolation-roles.ts',
      'sampler',
      String(port),
      source,
      String(n),
      String(gapMs),
      String(timeoutMs),
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  children.push(child);
  return new Promise((resolve, reject) => {
    onJsonLines(child, (json) => {
      const parsed = SamplesLine.safeParse(json);
      if (!parsed.success) return;
      const s = parsed.data;
      // Back to this process's performance.now() clock, which the crowd's `endedAt` uses.
      const origin = performance.timeOrigin;
      resolve({
        ms: s.ms,
        timeline: s.timeline.map((t) => ({ at: t.at - origin, ms: t.ms })),
        n: s.n,
        failures: new Map(s.failures),
      });
    });
    child.once('exit', (code, signal) =>
      reject(new Error(`the sampler exited (${code ?? signal}) without its samples`)),
    );
  });
}
