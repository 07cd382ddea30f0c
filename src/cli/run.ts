import type { Command } from './command.js';
import { UsageError, wantsHelp } from './command.js';
import { commands } from './commands.js';
import { describeFailure } from './failure.js';
import { VERSION } from './version.js';

function overview(): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  const lines = commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`);
  return [
    'Usage: endpoint-binder <command> [options]',
    '',
    'Commands:',
    ...lines,
    '',
    'Run `endpoint-binder <command> --help` for the options of a command;',
    '`endpoint-binder version` (or --version) prints the version.',
    '',
    'Exit codes: 0 success, 1 the command failed (one line says why), 2 bad flags or config.',
  ].join('\n');
}

/** Dispatches to a subcommand; returns the exit code. */
export async function runCli(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(overview() + '\n');
    return name ? 0 : 2;
  }
  if (name === '--version' || name === 'version') {
    process.stdout.write(`endpoint-binder ${VERSION}\n`);
    return 0;
  }
  const command: Command | undefined = commands.find((c) => c.name === name);
  if (!command) {
    process.stderr.write(`endpoint-binder: unknown command "${name}"\n\n${overview()}\n`);
    return 2;
  }
  if (wantsHelp(rest)) {
    process.stdout.write(command.usage + '\n');
    return 0;
  }
  try {
    return await command.run(rest);
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(
        `endpoint-binder ${command.name}: ${err.message}\nRun \`endpoint-binder ${command.name} --help\` for usage.\n`,
      );
      return 2;
    }
    const line = describeFailure(err);
    if (line !== undefined) {
      process.stderr.write(`endpoint-binder ${command.name}: ${line}\n`);
      return 1;
    }
    throw err;
  }
}
