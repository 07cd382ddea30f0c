import { checkCommand } from './check-command.js';
import type { Command } from './command.js';
import { controllerCommand } from './controller-command.js';
import { demoCommand } from './demo-command.js';
import { forwarderCommand } from './forwarder-command.js';
import { kubesimCommand } from './kubesim-command.js';
import { mockApiCommand } from './mock-api-command.js';
import { selectorCommand } from './selector-command.js';
import { statusCommand } from './status-command.js';
import { uninstallCommand } from './uninstall-command.js';

/** Every subcommand of `endpoint-binder`, in the order `--help` lists them. */
export const commands: Command[] = [
  demoCommand,
  controllerCommand,
  forwarderCommand,
  statusCommand,
  checkCommand,
  selectorCommand,
  uninstallCommand,
  mockApiCommand,
  kubesimCommand,
];
