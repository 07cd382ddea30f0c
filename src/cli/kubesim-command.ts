import { resolve } from 'node:path';
import { z } from 'zod';
import { createLogger } from '../log/logger.js';
import { servedKinds, startKubesim } from '../kubesim/index.js';
import { untilSignal, type Command } from './command.js';
import { parseFlags, portFlag } from './flags.js';

/** The served kinds as a table, generated from kubesim's registry so it cannot drift. */
function kindsTable(): string {
  const rows = servedKinds().map((k) => [
    k.resource,
    k.apiVersion,
    k.kind,
    k.namespaced ? 'namespaced' : 'cluster',
    k.verbs.join(','),
  ]);
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => r[i]?.length ?? 0))) ?? [];
  return rows
    .map(
      (r) =>
        `  ${r
          .map((c, i) => c.padEnd(widths[i] ?? 0))
          .join('  ')
          .trimEnd()}`,
    )
    .join('\n');
}

function usage(): string {
  return `Usage: endpoint-binder kubesim [options]

Runs kubesim, the local Kubernetes API simulator, on plain HTTP (or HTTPS with --tls) until
SIGINT or SIGTERM. Prints one JSON log line with its URL and kubeconfig path.

Options:
  --host <addr>        Address to listen on (default 127.0.0.1)
  --port <n>           Port to listen on; 0 lets the OS choose (default 0)
  --kubeconfig <path>  Write a kubeconfig for the simulator to this path
  --token <token>      Admin bearer token to accept (default: a random one)
  --tls                Serve HTTPS with a self-signed development certificate (kubectl needs it)
  -h, --help           Show this help

Kinds served (resource, apiVersion, kind, scope, verbs):
${kindsTable()}

Impersonation (--as, --as-group), kubectl auth can-i / whoami, and ValidatingAdmissionPolicies
work as on a cluster; see docs/kubesim.md.`;
}

const flagSpec = {
  host: { type: 'string' },
  port: { type: 'string' },
  kubeconfig: { type: 'string' },
  token: { type: 'string' },
  tls: { type: 'boolean' },
} as const;

const flagSchema = z.object({
  host: z.string().min(1).default('127.0.0.1'),
  port: portFlag.default(0),
  kubeconfig: z.string().min(1).optional(),
  token: z
    .string()
    .regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces')
    .optional(),
  tls: z.boolean().default(false),
});

export const kubesimCommand: Command = {
  name: 'kubesim',
  summary: 'Run the local Kubernetes API simulator',
  // Built on demand: listing the served kinds builds kubesim's registry.
  get usage() {
    return usage();
  },
  async run(argv) {
    const flags = parseFlags(argv, flagSpec, flagSchema);
    const log = createLogger({ name: 'kubesim' });
    const sim = await startKubesim({
      host: flags.host,
      port: flags.port,
      tls: flags.tls,
      ...(flags.token ? { tokens: [{ token: flags.token, user: 'kubesim-admin' }] } : {}),
      logger: log,
    });
    const kubeconfig = flags.kubeconfig ? resolve(flags.kubeconfig) : undefined;
    if (kubeconfig) await sim.writeKubeconfig(kubeconfig);
    log.info({ url: sim.url, kubeconfig: kubeconfig ?? null }, 'kubesim listening');
    const signal = await untilSignal();
    log.info({ signal }, 'kubesim stopping');
    await sim.stop();
    return 0;
  },
};
