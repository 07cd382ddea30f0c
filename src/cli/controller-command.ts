import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { compileSelector } from '../binding/selector.js';
import {
  CONTROLLER_FLAG_PATHS,
  applyFlagOverrides,
  resolveControllerConfig,
  type ControllerConfig,
  type ControllerFlag,
} from '../controller/config.js';
import { startController } from '../controller/controller.js';
import { kubeConfigFrom } from '../kube/index.js';
import { createLogger } from '../log/logger.js';
import { UsageError, untilSignal, type Command } from './command.js';
import { parseConfigText } from './config-text.js';

const usage = `Usage: endpoint-binder controller --config <file> [options]

Registers this install with the management API and projects every selected cluster-bound
endpoint into the cluster as an internal ClusterIP Service (operator namespace, named from the
endpoint id) plus an ExternalName alias Service <name>.<namespace>. Runs until SIGTERM.
The API key comes from the environment only: ENDPOINT_BINDER_API_KEY (never a flag, never logged).

Config file (YAML or JSON; every field optional except api.baseUrl):
  api:
    baseUrl: https://api.example.com    management API base URL (required)
    timeoutMs: 10000                     per-attempt request timeout
  registration:
    description: endpoint-binder         shown on the operator record (<= 255 characters)
    metadata: ""                         free text/JSON on the operator record
  bindings:
    enabled: true                        false: register without the bindings feature, project nothing
    endpointSelector: "true"             CEL over endpoint.{id,url,scheme,host,name,namespace,port,
                                         description,metadata}; compiled and type-checked at start;
                                         matches() is refused (JavaScript regexes can hang the process)
    clusterDomain: cluster.local         used in the alias's externalName
    portRange: {min: 10000, max: 19999}  inclusive forwarder port range (1024-65535)
    serviceLabels: {}                    extra labels on every projected Service
    serviceAnnotations: {}               extra annotations on every projected Service
    portReservationSeconds: 600          a removed URL keeps its forwarder port this long (0: off)
    limits: {endpointsPerHostname: 1000, portsPerHostname: 1000}
                                         caps per hostname; newer endpoints beyond are group-too-large
    deletes:                             when a Service may be deleted (docs/controller.md)
      knowledgeMaxAgeSeconds: 180        older endpoint knowledge deletes nothing; the replica is unready
      massDeleteShare: 0.2               a plan deleting more than this share of the install's Services …
      massDeleteMin: 10                  … and at least this many waits for a confirming listing
      massDeleteConfirmDelaySeconds: 5   how long after the first listing the confirming one starts
      deletedNotificationGraceSeconds: 30  an endpoint.deleted no listing confirmed waits this long
  operatorNamespace: <POD_NAMESPACE>     where internal Services, the Lease and the forwarders live
  releaseName: endpoint-binder           the install identity (with the operator namespace)
  resyncIntervalSeconds: 300             full relist of the account's endpoints (10-86400)
  writeConcurrency: 16                   Kubernetes writes in flight (1-256)
  http: {listen: "0.0.0.0:8080"}         /healthz, /readyz, /metrics, /status
  leaderElection: {enabled: true, leaseDurationSeconds: 15, renewDeadlineSeconds: 10, retryPeriodSeconds: 2}
  logLevel: info                         trace, debug, info, warn, error, fatal

Options (each overrides the file):
  --config <file>               the config file above
  --kubeconfig <file>           kubeconfig to use (default: in-cluster, then KUBECONFIG, ~/.kube/config)
  --context <name>              kubeconfig context
  --api-url <url>               api.baseUrl
  --endpoint-selector <cel>     bindings.endpointSelector
  --operator-namespace <ns>     operatorNamespace
  --release-name <name>         releaseName
  --cluster-domain <domain>     bindings.clusterDomain
  --port-range-min <n>          bindings.portRange.min
  --port-range-max <n>          bindings.portRange.max
  --resync-interval <seconds>   resyncIntervalSeconds
  --write-concurrency <n>       writeConcurrency
  --listen <host:port>          http.listen
  --log-level <level>           logLevel
  -h, --help                    show this help

Environment: ENDPOINT_BINDER_API_KEY (required), POD_NAMESPACE (default operator namespace),
POD_NAME (events about endpoints without a Service go on this Pod).
Exit codes: 0 stopped by a signal, 1 stopped by an error (a refused registration), 2 bad config.`;

const stringFlags = Object.fromEntries(
  Object.keys(CONTROLLER_FLAG_PATHS).map((k) => [k, { type: 'string' as const }]),
) as Record<ControllerFlag, { type: 'string' }>;

const pathFlags = z.object({
  config: z.string().min(1).optional(),
  kubeconfig: z.string().min(1).optional(),
  context: z.string().min(1).optional(),
});

export interface LoadedControllerSettings {
  config: ControllerConfig;
  kubeconfig?: string | undefined;
  context?: string | undefined;
}

/** Reads flags, the file and the environment into one validated config; every problem at once. */
export async function loadControllerSettings(
  argv: string[],
  env: Record<string, string | undefined>,
): Promise<LoadedControllerSettings> {
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({
      args: argv,
      options: {
        ...stringFlags,
        config: { type: 'string' },
        kubeconfig: { type: 'string' },
        context: { type: 'string' },
      },
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
  const paths = pathFlags.parse(values);
  let raw: unknown = {};
  if (paths.config) {
    let text: string;
    try {
      text = await readFile(paths.config, 'utf8');
    } catch (err) {
      throw new UsageError(
        `cannot read config file ${paths.config}: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
    raw = parseConfigText(text, paths.config) ?? {};
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
      throw new UsageError(`config file ${paths.config}: (root): must be a mapping`);
    }
  }
  const flagValues: Partial<Record<ControllerFlag, string>> = {};
  for (const k of Object.keys(CONTROLLER_FLAG_PATHS) as ControllerFlag[]) {
    const v = values[k];
    if (typeof v === 'string') flagValues[k] = v;
  }
  const merged = applyFlagOverrides(raw as Record<string, unknown>, flagValues);
  const r = resolveControllerConfig(merged, env);
  if (!r.ok) {
    const where = paths.config ? `config (file ${paths.config} and flags)` : 'config (flags)';
    throw new UsageError(`invalid ${where}:\n${r.errors.map((e) => `  ${e}`).join('\n')}`);
  }
  const sel = compileSelector(r.config.bindings.endpointSelector);
  if (!sel.ok) throw new UsageError(`invalid config:\n  bindings.endpointSelector: ${sel.message}`);
  return { config: r.config, kubeconfig: paths.kubeconfig, context: paths.context };
}

export const controllerCommand: Command = {
  name: 'controller',
  summary: 'Run the controller: register, then project selected endpoints as Services',
  usage,
  async run(argv) {
    const settings = await loadControllerSettings(argv, process.env);
    const { config } = settings;
    const log = createLogger({ name: 'controller', level: config.logLevel });
    let kubeConfig;
    try {
      kubeConfig = kubeConfigFrom({
        ...(settings.kubeconfig ? { kubeconfigPath: settings.kubeconfig } : {}),
        ...(settings.context ? { context: settings.context } : {}),
      });
    } catch (err) {
      throw new UsageError(`kubeconfig: ${err instanceof Error ? err.message : String(err)}`);
    }
    const podName = process.env['POD_NAME'];
    const controller = await startController({
      config,
      kubeConfig,
      logger: log,
      ...(podName ? { pod: { name: podName, namespace: config.operatorNamespace } } : {}),
    });
    const outcome = await Promise.race([untilSignal().then(() => undefined), controller.done]);
    log.info({ reason: outcome ? outcome.message : 'signal' }, 'controller stopping');
    await controller.stop();
    return outcome ? 1 : 0;
  },
};
