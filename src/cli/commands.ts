import type { Command } from './command.js';
import { demoCommand } from './demo-command.js';
import { forwarderCommand } from './forwarder-command.js';
import { kubesimCommand } from './kubesim-command.js';
import { mockApiCommand } from './mock-api-command.js';

/** Every subcommand of `endpoint-binder`, in the order `--help` lists them. */
export const commands: Command[] = [demoCommand, mockApiCommand, kubesimCommand, forwarderCommand];
