import type { Command } from './command.js';

/** Every subcommand of `endpoint-binder`, in the order `--help` lists them. */
export const commands: Command[] = [];
