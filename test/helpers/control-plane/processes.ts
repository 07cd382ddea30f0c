import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * A control-plane process: started in a process group of its own with its output in a log file,
 * stopped with SIGTERM then SIGKILL, and never left behind (a detached watchdog kills every
 * group when the test process is gone).
 */
export interface ManagedProcess {
  readonly name: string;
  readonly child: ChildProcess;
  readonly logFile: string;
  /** The last `bytes` of its output, for failure messages. */
  tail(bytes?: number): string;
  /** SIGTERM to the group, SIGKILL after `graceMs`; resolves once the process has exited. */
  stop(graceMs?: number): Promise<void>;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export function startProcess(name: string, file: string, args: string[], logFile: string): ManagedProcess {
  const log = createWriteStream(logFile, { flags: 'a' });
  const child = spawn(file, args, { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.pipe(log, { end: false });
  child.stderr?.pipe(log, { end: false });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
    child.once('error', () => resolve({ code: 127, signal: null }));
  });
  const tail = (bytes = 3000): string => {
    try {
      return readFileSync(logFile, 'utf8').slice(-bytes);
    } catch {
      return '';
    }
  };
  const signalGroup = (signal: NodeJS.Signals): void => {
    if (child.pid === undefined) return;
    try {
      process.kill(-child.pid, signal);
    } catch {
      // the group is gone already
    }
  };
  return {
    name,
    child,
    logFile,
    tail,
    exited,
    async stop(graceMs = 5000) {
      if (child.exitCode === null && child.signalCode === null) {
        signalGroup('SIGTERM');
        const timer = setTimeout(() => signalGroup('SIGKILL'), graceMs);
        await exited;
        clearTimeout(timer);
      }
      // Whatever the process left in its group goes too.
      signalGroup('SIGKILL');
      await new Promise<void>((r) => log.end(() => r()));
    },
  };
}

/** Starts the watchdog for these processes' groups; returns a function that ends it. */
export function startWatchdog(processes: readonly ManagedProcess[]): () => void {
  const groups = processes.flatMap((p) => (p.child.pid === undefined ? [] : [String(p.child.pid)]));
  const script = fileURLToPath(new URL('./watchdog.mjs', import.meta.url));
  const dog = spawn(process.execPath, [script, String(process.pid), ...groups], {
    detached: true,
    stdio: 'ignore',
  });
  dog.unref();
  return () => {
    try {
      dog.kill('SIGTERM');
    } catch {
      // gone
    }
  };
}
