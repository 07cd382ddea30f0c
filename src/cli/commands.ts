import type { Command } from './command.js';

/**
 * Every subcommand of `endpoint-binder`, in the order `--help` lists them. Each command's module
 * is imported only when that command runs: `--version`, `--help` and `status` must not pay for
 * the Kubernetes client, the simulators and the controller (issue #29 item 6: the CLI answers at
 * once).
 */
export interface CommandEntry {
  name: string;
  summary: string;
  /** A development tool (simulators, the demo): left out of the production image. */
  development?: boolean;
  load(): Promise<Command>;
}

export const commands: CommandEntry[] = [
  {
    name: 'demo',
    development: true,
    summary: 'Run everything on loopback and show an endpoint projected and reached (npm start)',
    load: async () => (await import('./demo-command.js')).demoCommand,
  },
  {
    name: 'controller',
    summary: 'Run the controller: register, then project selected endpoints as Services',
    load: async () => (await import('./controller-command.js')).controllerCommand,
  },
  {
    name: 'forwarder',
    summary: 'Run a forwarder: listeners for the internal Services, carried to the binding ingress',
    load: async () => (await import('./forwarder-command.js')).forwarderCommand,
  },
  {
    name: 'status',
    summary: 'Show every endpoint and its projection state (from a running controller)',
    load: async () => (await import('./status-command.js')).statusCommand,
  },
  {
    name: 'check',
    summary: 'Diagnose an install: config, API, cluster, permissions, Lease, forwarders, ingress',
    load: async () => (await import('./check-command.js')).checkCommand,
  },
  {
    name: 'selector',
    summary: 'Try an endpoint selector against the account before using it (selector test)',
    load: async () => (await import('./selector-command.js')).selectorCommand,
  },
  {
    name: 'uninstall',
    summary: "Apply an install's uninstall policy (delete or retain its Services)",
    load: async () => (await import('./uninstall-command.js')).uninstallCommand,
  },
  {
    name: 'mock-api',
    development: true,
    summary: 'Run the mock management API (and optionally its admin interface)',
    load: async () => (await import('./mock-api-command.js')).mockApiCommand,
  },
  {
    name: 'kubesim',
    development: true,
    summary: 'Run the local Kubernetes API simulator',
    load: async () => (await import('./kubesim-command.js')).kubesimCommand,
  },
];
