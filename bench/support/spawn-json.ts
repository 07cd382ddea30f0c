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
  // BENCH_CPU_PROF_DIR: every child writes a V8 CPU profile there when it exits normally (the
  // forwarder does on SIGTERM; see stopChildren).
  const profile = process.env['BENCH_CPU_PROF_DIR'];
  const flags = profile ? ['--cpu-prof', `--cpu-prof-dir=${profile}`] : [];
  const child = spawn(process.execPath, [...flags, '--import', 'tsx', ...argv], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, ...env },
    ...(opts.cwd ? { cwd: opts.cwd } : {}),
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${argv.join(' ')}: no ready line within 60 s`)), 60_000);
    onJsonLines(child, (obj) => {
      const v = pick(obj as Record<string, unknown>);
      if (v !== undefined) {
        clearTimeout(timer);
        resolve({ child, value: v });
      }
    });
    child.once('exit', (code) => reject(new Error(`${argv.join(' ')} exited with ${code}`)));
  });
}

/** Calls `each` with every stdout line of `child` that parses as JSON (other lines are skipped). */
export function onJsonLines(child: ChildProcess, each: (value: unknown) => void): void {
  let buf = '';
  child.stdout?.setEncoding('utf8').on('data', (c: string) => {
    buf += c;
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch {
        continue;
      }
      each(value);
    }
  });
}

/**
 * Stops every child: SIGKILL, or with BENCH_CPU_PROF_DIR first SIGTERM and up to 5 s, so that
 * those that exit on it (the forwarder CLI) write their profiles.
 */
export async function stopChildren(): Promise<void> {
  if (process.env['BENCH_CPU_PROF_DIR']) {
    for (const c of children) c.kill('SIGTERM');
    const deadline = Date.now() + 5_000;
    while (Date.now() < deadline && children.some((c) => c.exitCode === null && c.signalCode === null))
      await new Promise((r) => setTimeout(r, 100));
  }
  for (const c of children) c.kill('SIGKILL');
}
