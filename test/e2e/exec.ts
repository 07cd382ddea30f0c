import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { pollUntil } from '../helpers/wait.js';
import { budget } from '../helpers/budget.js';

export interface ExecResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a tool; never throws for a non-zero exit (the caller decides), only for a missing binary. */
export function exec(
  file: string,
  args: string[],
  opts: { input?: string; timeoutMs?: number; cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<ExecResult> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      file,
      args,
      {
        timeout: opts.timeoutMs ?? 120_000,
        maxBuffer: 64 * 1024 * 1024,
        ...(opts.cwd ? { cwd: opts.cwd } : {}),
        ...(opts.env ? { env: opts.env } : {}),
      },
      (err, stdout, stderr) => {
        if (err && (err as NodeJS.ErrnoException).code === 'ENOENT') {
          reject(new Error(`${file}: not found`));
          return;
        }
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
    if (opts.input !== undefined) child.stdin?.end(opts.input);
  });
}

/** Like exec, but a non-zero exit is an error carrying the command and its stderr. */
export async function mustExec(
  file: string,
  args: string[],
  opts: Parameters<typeof exec>[2] = {},
): Promise<string> {
  const r = await exec(file, args, opts);
  if (r.code !== 0) {
    throw new Error(`${file} ${args.join(' ')} exited ${r.code}:\n${r.stderr || r.stdout}`);
  }
  return r.stdout;
}

/**
 * Polls until `check` returns a value (not undefined); bounded in time (scaled by the run's time
 * factor), the last value seen and the last problem reported (test/helpers/wait.ts).
 */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined>,
  opts: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const v = await pollUntil(what, check, (x) => x !== undefined, {
    timeoutMs: opts.timeoutMs ?? 180_000,
    intervalMs: opts.intervalMs ?? 2_000,
  });
  return v as T;
}

/** A long-running tool (kubectl port-forward); resolves once a line of its output matches. */
export function spawnUntil(
  file: string,
  args: string[],
  ready: RegExp,
  quietMs = 60_000,
): Promise<{ child: ChildProcess; match: RegExpMatchArray }> {
  const timeoutMs = budget(quietMs);
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let seen = '';
    const timer = setTimeout(() => {
      child.kill();
      reject(new Error(`${file} ${args.join(' ')}: no ${String(ready)} within ${timeoutMs} ms:\n${seen}`));
    }, timeoutMs);
    const onData = (b: Buffer): void => {
      seen += b.toString();
      const m = seen.match(ready);
      if (m) {
        clearTimeout(timer);
        resolve({ child, match: m });
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${file} ${args.join(' ')} exited ${code}:\n${seen}`));
    });
  });
}
