import { existsSync, mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { createLogger } from '../log/logger.js';
import { servedKinds, startKubesim, type Kubesim } from '../kubesim/index.js';
import { cliPodRunner } from '../kubesim/workloads/cli-pod-runner.js';
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
  --workloads          Also run Deployments, Jobs (Helm's hooks included) and their Pods: each
                       pod of the endpoint-binder image is a local endpoint-binder process on its
                       own loopback pod IP (127.x.x.x, not 127.0.x.x), with its volumes, env and ServiceAccount
                       token; implies --tls. How to try the Helm chart on a laptop: docs/install.md
  --pods-dir <dir>     With --workloads: each pod's files and its log (<dir>/<ns>/<pod>/log)
                       (default .tmp/kubesim-pods)
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
  workloads: { type: 'boolean' },
  'pods-dir': { type: 'string' },
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
  workloads: z.boolean().default(false),
  'pods-dir': z.string().min(1).default('.tmp/kubesim-pods'),
});

/** How a pod runs the CLI: this checkout's bin/ (dist/ when fresh), else this very entry point. */
function cliCommand(): string[] {
  const bin = fileURLToPath(new URL('../../bin/endpoint-binder.js', import.meta.url));
  return [process.execPath, existsSync(bin) ? bin : (process.argv[1] ?? bin)];
}

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
    // The pods' kubeconfigs need the URL and CA, known once it listens.
    const started: { sim?: Kubesim } = {};
    const podsDir = resolve(flags['pods-dir']);
    const sim = await startKubesim({
      host: flags.host,
      port: flags.port,
      tls: flags.tls || flags.workloads,
      ...(flags.token ? { tokens: [{ token: flags.token, user: 'kubesim-admin' }] } : {}),
      logger: log,
      ...(flags.workloads
        ? {
            runJobs: true,
            podStopGraceMs: 5000,
            podRunner: cliPodRunner({
              cli: cliCommand(),
              dir: podsDir,
              server: () => ({
                url: started.sim?.url ?? '',
                ...(started.sim?.caPem ? { caPem: started.sim.caPem } : {}),
              }),
            }),
          }
        : {}),
    });
    started.sim = sim;
    const kubeconfig = flags.kubeconfig ? resolve(flags.kubeconfig) : undefined;
    if (kubeconfig) {
      mkdirSync(dirname(kubeconfig), { recursive: true });
      await sim.writeKubeconfig(kubeconfig);
    }
    log.info(
      { url: sim.url, kubeconfig: kubeconfig ?? null, ...(flags.workloads ? { podsDir } : {}) },
      'kubesim listening',
    );
    const signal = await untilSignal();
    log.info({ signal }, 'kubesim stopping');
    await sim.stop();
    return 0;
  },
};
