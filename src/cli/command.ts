/** One subcommand of the `endpoint-binder` executable. */
export interface Command {
  name: string;
  summary: string;
  /** Full help text printed by `endpoint-binder <name> --help`. */
  usage: string;
  /** Runs the command; resolves with the process exit code once the command has finished or been stopped. */
  run(argv: string[]): Promise<number>;
}

/** A usage error: printed with the command's help hint, exit code 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

export function wantsHelp(argv: string[]): boolean {
  return argv.includes('--help') || argv.includes('-h');
}

/** Resolves when SIGINT or SIGTERM arrives; used by long-running subcommands. */
export function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const on = (sig: NodeJS.Signals) => {
      process.off('SIGINT', on);
      process.off('SIGTERM', on);
      resolve(sig);
    };
    process.on('SIGINT', on);
    process.on('SIGTERM', on);
  });
}
