import { z } from 'zod';
import { ForwarderConfig } from '../forwarder/config.js';
import { ForwarderConfigError, startForwarder } from '../forwarder/forwarder.js';
import { kubeConfigFrom } from '../kube/index.js';
import { createLogger } from '../log/logger.js';
import { UsageError, untilSignal, type Command } from './command.js';
import { formatIssues, readConfigFile } from './config-file.js';
import { parseFlags } from './flags.js';

const AUTHTOKEN_ENV = 'ENDPOINT_BINDER_AUTHTOKEN';

const usage = `Usage: endpoint-binder forwarder [options]

Serves this install's internal Services: one listener per allocated forwarder port, each
connection carried to the binding ingress. Runs until SIGTERM/SIGINT, then drains (a second
signal stops at once). The agent authtoken comes from authtokenFile (a mounted Secret key,
re-read when it changes) or else from the environment variable ${AUTHTOKEN_ENV}; it is never a
flag value. Values come from the config file, then the flags (which win), then the environment
defaults. Full reference: docs/forwarder.md.

Options:
  --config <file>               YAML/JSON config file (camelCase fields below)
  --kubeconfig <path>           kubeconfig file (default: KUBECONFIG, ~/.kube/config, then in-cluster)
  --context <name>              kubeconfig context
  --release-name <name>         releaseName
  --operator-namespace <ns>     operatorNamespace (default: env POD_NAMESPACE)
  --listen-host <addr>          listenHost
  --authtoken-file <path>       authtokenFile
  --ingress-address <host:port> ingress.address
  --ingress-tls <true|false>    ingress.tls
  --ingress-ca-file <path>      ingress.caFile
  --ingress-server-name <name>  ingress.serverName
  --http-listen <host:port>     http.listen
  --log-level <level>           logLevel
  -h, --help                    Show this help

Config fields (defaults in brackets):
  releaseName                   Helm release name; with operatorNamespace the install identity (required)
  operatorNamespace             the forwarder's namespace, where the internal Services are [env POD_NAMESPACE]
  listenHost                    address the allocated ports listen on [0.0.0.0]
  authtokenFile                 file holding the agent authtoken, re-read on change [env ${AUTHTOKEN_ENV}]
  portRange.min, portRange.max  the allocated ports; others are never bound [1024, 65535]
  dialOn.http, dialOn.tcp       per URL scheme: dial the ingress at the client's first byte (data)
                                or at accept (accept) [http: data, tcp: accept]
  ingress.address               binding ingress host:port [the install record ConfigMap <release>-install]
  ingress.tls                   TLS to the ingress; false only for a loopback address [true]
  ingress.caFile                PEM CA bundle to trust instead of the system CAs
  ingress.serverName            TLS server name (SNI and certificate check) [the address's host]
  limits.maxConnections         open client connections, all ports together [10000]
  limits.maxConnectionsPerPort  open client connections per port [2000]
  limits.maxSilentDialsPerPort  per port, dialled clients (dialOn accept) that sent nothing yet [32]
  limits.maxConcurrentDials     ingress handshakes at once, at most (window from 64) [1024]
  limits.maxDialAttempts        ingress attempts per client, retries of transient refusals included [6]
  limits.acceptBacklog          kernel accept queue per port [4096]
  limits.dialTimeoutMs          one ingress attempt: connect + TLS + reply [5000]
  limits.idleTimeoutMs          reset a connection with no bytes either way for this long [300000]
  limits.prefaceTimeoutMs       start of the dial to ingress ok, retries included [10000]
  drain.delaySeconds            after SIGTERM: unready, still accepting, this long [5]
  drain.timeoutSeconds          then: stop accepting, open connections get this long [25]
  http.listen                   /healthz, /readyz, /metrics [0.0.0.0:8081]
  logLevel                      fatal|error|warn|info|debug|trace|silent [info]`;

const flagSpec = {
  config: { type: 'string' },
  kubeconfig: { type: 'string' },
  context: { type: 'string' },
  'release-name': { type: 'string' },
  'operator-namespace': { type: 'string' },
  'listen-host': { type: 'string' },
  'authtoken-file': { type: 'string' },
  'ingress-address': { type: 'string' },
  'ingress-tls': { type: 'string' },
  'ingress-ca-file': { type: 'string' },
  'ingress-server-name': { type: 'string' },
  'http-listen': { type: 'string' },
  'log-level': { type: 'string' },
} as const;

const Flags = z.strictObject({
  config: z.string().min(1).optional(),
  kubeconfig: z.string().min(1).optional(),
  context: z.string().min(1).optional(),
  'release-name': z.string().optional(),
  'operator-namespace': z.string().optional(),
  'listen-host': z.string().optional(),
  'authtoken-file': z.string().optional(),
  'ingress-address': z.string().optional(),
  'ingress-tls': z
    .enum(['true', 'false'], { error: 'must be true or false' })
    .transform((v) => v === 'true')
    .optional(),
  'ingress-ca-file': z.string().optional(),
  'ingress-server-name': z.string().optional(),
  'http-listen': z.string().optional(),
  'log-level': z.string().optional(),
});
type Flags = z.infer<typeof Flags>;

/** Config path → the flag that sets it, so an error names both. */
const FLAG_OF: Record<string, keyof Flags> = {
  releaseName: 'release-name',
  operatorNamespace: 'operator-namespace',
  listenHost: 'listen-host',
  authtokenFile: 'authtoken-file',
  'ingress.address': 'ingress-address',
  'ingress.tls': 'ingress-tls',
  'ingress.caFile': 'ingress-ca-file',
  'ingress.serverName': 'ingress-server-name',
  'http.listen': 'http-listen',
  logLevel: 'log-level',
};

const RawFile = z.record(z.string(), z.unknown());

function setPath(target: Record<string, unknown>, path: string, value: unknown): void {
  const parts = path.split('.');
  let obj = target;
  for (const part of parts.slice(0, -1)) {
    const next = obj[part];
    // A non-object here is left for the schema to report; the flag then has nowhere to go.
    if (next === undefined) obj = obj[part] = {};
    else if (typeof next === 'object' && next !== null && !Array.isArray(next))
      obj = next as Record<string, unknown>;
    else return;
  }
  obj[parts[parts.length - 1]!] = value;
}

/** File, then flags, then environment defaults; validated as a whole (every bad field listed). */
export async function resolveForwarderConfig(flags: Flags, env: NodeJS.ProcessEnv): Promise<ForwarderConfig> {
  const merged: Record<string, unknown> = flags.config
    ? { ...(await readConfigFile(flags.config, RawFile)) }
    : {};
  for (const [path, flag] of Object.entries(FLAG_OF)) {
    const v = flags[flag];
    if (v !== undefined) setPath(merged, path, v);
  }
  if (merged['operatorNamespace'] === undefined && env['POD_NAMESPACE']) {
    merged['operatorNamespace'] = env['POD_NAMESPACE'];
  }
  const parsed = ForwarderConfig.safeParse(merged);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => {
      const flag = FLAG_OF[i.path.map(String).join('.')];
      return flag ? { ...i, message: `${i.message} (file field or --${flag})` } : i;
    });
    throw new UsageError(
      `invalid configuration${flags.config ? ` (${flags.config} and flags)` : ''}:\n${formatIssues(issues)}`,
    );
  }
  return parsed.data;
}

export function authtokenFrom(env: NodeJS.ProcessEnv): string {
  const token = env[AUTHTOKEN_ENV];
  if (!token)
    throw new UsageError(
      `${AUTHTOKEN_ENV}: must be set to the agent authtoken (it is never a flag), or set authtokenFile`,
    );
  if (token.length > 512 || /[\s]/.test(token)) {
    throw new UsageError(`${AUTHTOKEN_ENV}: must be 1–512 characters without whitespace`);
  }
  return token;
}

export const forwarderCommand: Command = {
  name: 'forwarder',
  summary: 'Run a forwarder: listeners for the internal Services, carried to the binding ingress',
  usage,
  async run(argv) {
    const flags = parseFlags(argv, flagSpec, Flags);
    const config = await resolveForwarderConfig(flags, process.env);
    // With a file the environment is not consulted: one source, so a stale copy cannot win.
    const authtoken = config.authtokenFile ? undefined : authtokenFrom(process.env);
    let kubeConfig;
    try {
      kubeConfig = kubeConfigFrom({
        ...(flags.kubeconfig ? { kubeconfigPath: flags.kubeconfig } : {}),
        ...(flags.context ? { context: flags.context } : {}),
      });
    } catch (err) {
      throw new UsageError(`--kubeconfig: ${err instanceof Error ? err.message : String(err)}`);
    }
    const logger = createLogger({ level: config.logLevel, name: 'forwarder' });
    let forwarder;
    try {
      forwarder = await startForwarder({
        config,
        ...(authtoken !== undefined ? { authtoken } : {}),
        kubeConfig,
        logger,
      });
    } catch (err) {
      if (err instanceof ForwarderConfigError) throw new UsageError(err.message);
      throw err;
    }
    const signal = await untilSignal();
    logger.info({ signal }, 'forwarder received signal');
    const second = untilSignal();
    void second.then((sig) => {
      logger.warn({ signal: sig }, 'forwarder second signal, stopping now');
      void forwarder.stop();
    });
    await forwarder.shutdown();
    return 0;
  },
};
