import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { setPriority, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { budget } from './budget.js';

const Ready = z.object({ apiUrl: z.string().url(), adminUrl: z.string(), kubeconfig: z.string() });

export interface SimChild {
  apiUrl: string;
  adminUrl: string;
  /** A kubeconfig file for kubesim's admin token. */
  kubeconfig: string;
  close(): Promise<void>;
}

const script = join(dirname(fileURLToPath(import.meta.url)), 'sim-process.ts');

export interface SimChildOptions {
  readyTimeoutMs?: number;
  /**
   * Runs the child at a lower priority (the default), for tests that measure this process's event
   * loop. A test that only needs the servers out of its process passes false: on a loaded machine
   * a deprioritised cluster is what would decide its pace.
   */
  lowerPriority?: boolean;
}

/**
 * Starts the mock API and kubesim in a child process (test/helpers/sim-process.ts) and resolves
 * with their addresses; `close()` ends the child and removes its kubeconfig.
 */
export async function startSimChild(
  namespaces: readonly string[],
  { readyTimeoutMs = 60_000, lowerPriority = true }: SimChildOptions = {},
): Promise<SimChild> {
  const dir = mkdtempSync(join(tmpdir(), 'eb-sim-'));
  const child = spawn(process.execPath, ['--import', 'tsx', script, join(dir, 'kubeconfig'), ...namespaces], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // In production the API servers run elsewhere: here they must not take CPU time from the
  // process under test on a small, shared machine (a lower priority; best effort).
  try {
    if (lowerPriority && child.pid !== undefined) setPriority(child.pid, 10);
  } catch {
    // Not permitted here: the child runs at the same priority.
  }
  try {
    const ready = await new Promise<z.infer<typeof Ready>>((resolve, reject) => {
      let out = '';
      const timer = setTimeout(
        () => reject(new Error(`sim child: no ready line within ${budget(readyTimeoutMs)} ms`)),
        budget(readyTimeoutMs),
      );
      child.stdout.setEncoding('utf8').on('data', (c: string) => {
        out += c;
        const nl = out.indexOf('\n');
        if (nl < 0) return;
        clearTimeout(timer);
        try {
          resolve(Ready.parse(JSON.parse(out.slice(0, nl))));
        } catch (err) {
          reject(err instanceof Error ? err : new Error(String(err)));
        }
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`sim child exited with ${code} before it was ready`));
      });
    });
    return {
      ...ready,
      async close() {
        child.stdin.end();
        const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(killer);
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    child.kill('SIGKILL');
    await exited;
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}
