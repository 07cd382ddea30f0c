import { parseArgs } from 'node:util';
import { UsageError, wantsHelp, type Command } from './command.js';
import { commands, type CommandEntry } from './commands.js';
import { VERSION } from './version.js';
import { openFilesLimit } from '../forwarder/fd-limit.js';

/**
 * Descriptors Node's ESM loader may want at once at start: it opens a module graph's files
 * concurrently, and the Kubernetes client's has some 1,300 (seen 2026-11-27: loading failed at a
 * hard limit of 700, passed at 800). Node raises the soft limit to the hard one itself, so only a
 * low hard limit fails.
 */
export const LOADER_DESCRIPTORS = 1024;

function overview(): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  const lines = commands.map(
    (c) =>
      `  ${c.name.padEnd(width)}  ${c.summary}${c.development ? ' (development; not in the image)' : ''}`,
  );
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

/** `version [-o text|json]` (also `--version`): the build's version, as text or as JSON. */
function printVersion(argv: string[]): number {
  let format: string | undefined;
  try {
    const { values } = parseArgs({ args: argv, options: { output: { type: 'string', short: 'o' } } });
    format = values.output ?? 'text';
  } catch (err) {
    format = undefined;
    process.stderr.write(`endpoint-binder version: ${err instanceof Error ? err.message : String(err)}\n`);
  }
  if (format !== 'text' && format !== 'json') {
    if (format !== undefined)
      process.stderr.write(`endpoint-binder version: -o must be "text" or "json", not "${format}"\n`);
    process.stderr.write('Usage: endpoint-binder version [-o text|json]\n');
    return 2;
  }
  process.stdout.write(
    format === 'json'
      ? `${JSON.stringify({ version: VERSION, node: process.versions.node })}\n`
      : `endpoint-binder ${VERSION}\n`,
  );
  return 0;
}

/**
 * The command's module, or why this build has none: the production image leaves out the
 * development commands (the simulators and the demo) on purpose.
 */
export async function loadCommand(entry: CommandEntry): Promise<Command | string> {
  try {
    return await entry.load();
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    const limit = await limitAfterLoad();
    // Out of descriptors, the loader reports a missing module too: say which fact it is.
    if (
      code === 'EMFILE' ||
      (code === 'ERR_MODULE_NOT_FOUND' && limit !== undefined && limit < LOADER_DESCRIPTORS)
    )
      return tooFewDescriptors(limit, err);
    if (code !== 'ERR_MODULE_NOT_FOUND') throw err;
    return entry.development
      ? 'not in this build: the production image leaves out the simulators and the demo; run it from a clone (npx endpoint-binder ' +
          `${entry.name})`
      : `this build is incomplete (${err instanceof Error ? err.message : String(err)}); reinstall it`;
  }
}

/** The open files limit, read once the failed load's descriptors are closed (they may still be open now). */
async function limitAfterLoad(): Promise<number | undefined> {
  for (let tries = 0; tries < 5; tries++) {
    const limit = await openFilesLimit();
    if (limit !== undefined) return limit;
    await new Promise((r) => setTimeout(r, 20));
  }
  return undefined;
}

function tooFewDescriptors(limit: number | undefined, err: unknown): string {
  const seen = err instanceof Error ? err.message : String(err);
  return (
    `cannot load its modules with an open files limit of ${limit ?? 'unknown'} (${seen}): ` +
    `raise the hard limit to at least ${LOADER_DESCRIPTORS} (ulimit -Hn ${LOADER_DESCRIPTORS}, or the container runtime's nofile limit)`
  );
}

/** Dispatches to a subcommand; returns the exit code. */
export async function runCli(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(overview() + '\n');
    return name ? 0 : 2;
  }
  if (name === '--version' || name === 'version') return printVersion(rest);
  const entry: CommandEntry | undefined = commands.find((c) => c.name === name);
  if (!entry) {
    process.stderr.write(`endpoint-binder: unknown command "${name}"\n\n${overview()}\n`);
    return 2;
  }
  const command = await loadCommand(entry);
  if (typeof command === 'string') {
    process.stderr.write(`endpoint-binder ${entry.name}: ${command}\n`);
    return 1;
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
    // Loaded only on a failure: it pulls in the API and Kubernetes clients' error types.
    const { describeFailure } = await import('./failure.js');
    const line = describeFailure(err);
    if (line !== undefined) {
      process.stderr.write(`endpoint-binder ${command.name}: ${line}\n`);
      return 1;
    }
    throw err;
  }
}
