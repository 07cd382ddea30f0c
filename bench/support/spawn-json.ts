import { spawn, type ChildProcess } from 'node:child_process';

/** Every process the benchmarks spawned, so they can be killed at the end. */
export const children: ChildProcess[] = [];

/**
 * Spawns a process and resolves with its first stdout line that parses as JSON and passes `pick`.
 * `cwd` runs it from another tree (e.g. an older checkout of the project, for a before/after run).
 */
export function spawnJson<T>(
  argv: string[],
  env: Record<string, string>,
  pick: (o: Record<string, unknown>) => T | undefined,
  opts: { cwd?: string } = {},
): Promise<{ child: ChildProcess; value: T }> {
  const child = spawn(process.execPath, ['--import', 'tsx', ...argv], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, ...env },
    ...(opts.cwd ? { cwd: opts.cwd } : {}),
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    let buf = '';
    const timer = setTimeout(() => reject(new Error(`${argv.join(' ')}: no ready line within 60 s`)), 60_000);
    child.stdout.setEncoding('utf8').on('data', (c: string) => {
      buf += c;
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        let obj: Record<string, unknown>;
        try {
          obj = JSON.parse(line) as Record<string, unknown>;
        } catch {
          continue;
        }
        const v = pick(obj);
        if (v !== undefined) {
          clearTimeout(timer);
          resolve({ child, value: v });
        }
      }
    });
    child.once('exit', (code) => reject(new Error(`${argv.join(' ')} exited with ${code}`)));
  });
}
