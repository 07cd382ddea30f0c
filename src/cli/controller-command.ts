import { startController } from '../controller/controller.js';

import { createLogger } from '../log/logger.js';
import { cliKubeConfig } from './kube-source.js';
import { UsageError, untilSignal, type Command } from './command.js';
import { preflightServingProbes } from './controller-preflight.js';
import { loadControllerSettings } from './controller-settings.js';

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
    namespaces:                          where alias Services may be written (the namespace policy)
      deny: [kube-*, openshift, openshift-*]   names, or prefixes ending in *; the operator
                                         namespace is always denied
      allow: []                          names or prefixes that override deny
      selector:                          a namespace's labels must match (matchLabels/matchExpressions);
        matchExpressions: [{key: endpoint-binder.io/aliases, operator: NotIn, values: [disabled]}]
                                         opt-in mode: {matchLabels: {endpoint-binder.io/aliases: enabled}}
    foreignNameGraceSeconds: 600         an alias name a foreign Service held is taken only after
                                         it has been free this long
    portReservationSeconds: 600          a removed URL keeps its forwarder port this long (0: off)
    limits: {endpointsPerHostname: 1000, portsPerHostname: 1000}
                                         caps per hostname; newer endpoints beyond are group-too-large
    deletes:                             each delete is proven per endpoint (docs/controller.md "Deletion")
      knowledgeMaxAgeSeconds: 180        older knowledge deselects nothing; the replica is unready
      (massDeleteShare, massDeleteMin, massDeleteConfirmDelaySeconds, deletedNotificationGraceSeconds:
       still accepted, no longer used)
  operatorNamespace: <POD_NAMESPACE>     where internal Services, the Lease and the forwarders live
  releaseName: endpoint-binder           the install identity (with the operator namespace)
  resyncIntervalSeconds: 300             full relist of the account's endpoints (10-86400)
  writeConcurrency: 16                   Kubernetes writes in flight (1-256)
  http: {listen: "0.0.0.0:8080"}         /healthz, /readyz, /metrics, /status
  leaderElection: {enabled: true, leaseDurationSeconds: 15, renewDeadlineSeconds: 10, retryPeriodSeconds: 2}
  logLevel: info                         trace, debug, info, warn, error, fatal

Options (each overrides the file):
  --config <file>               the config file above
  --kubeconfig <file>           kubeconfig to use (default: KUBECONFIG, ~/.kube/config, then in-cluster)
  --context <name>              kubeconfig context
  --api-url <url>               api.baseUrl
  --endpoint-selector <cel>     bindings.endpointSelector
  --operator-namespace <ns>     operatorNamespace
  --release-name <name>         releaseName
  --cluster-domain <domain>     bindings.clusterDomain
  --port-range-min <n>          bindings.portRange.min
  --port-range-max <n>          bindings.portRange.max
  --namespace-deny <list>       bindings.namespaces.deny (comma-separated)
  --namespace-allow <list>      bindings.namespaces.allow (comma-separated)
  --foreign-name-grace <secs>   bindings.foreignNameGraceSeconds
  --resync-interval <seconds>   resyncIntervalSeconds
  --write-concurrency <n>       writeConcurrency
  --listen <host:port>          http.listen
  --log-level <level>           logLevel
  -h, --help                    show this help

Environment: ENDPOINT_BINDER_API_KEY (required), POD_NAMESPACE (default operator namespace),
POD_NAME (events about endpoints without a Service go on this Pod).
Before registering, both APIs must answer: errors waiting cannot heal (a TLS failure, 401/403 from
either API, a missing operator namespace, a URL that is not the management API) stop it with one
line naming the setting; others (connection refused, DNS, 5xx, 429) are retried with backoff and
logged once a minute.
Exit codes: 0 stopped by a signal, 1 stopped by an error (one line says which setting), 2 bad config.`;

export { loadControllerSettings, type LoadedControllerSettings } from './controller-settings.js';

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
      kubeConfig = cliKubeConfig({
        ...(settings.kubeconfig ? { kubeconfigPath: settings.kubeconfig } : {}),
        ...(settings.context ? { context: settings.context } : {}),
      });
    } catch (err) {
      throw new UsageError(`kubeconfig: ${err instanceof Error ? err.message : String(err)}`);
    }
    // Registration only once both APIs answer; what waiting cannot heal stops here, one line.
    const stopPreflight = new AbortController();
    const onSignal = (): void => stopPreflight.abort();
    process.once('SIGTERM', onSignal);
    process.once('SIGINT', onSignal);
    const verdict = await preflightServingProbes(config, kubeConfig, log, stopPreflight.signal);
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
    if (verdict.kind === 'fatal') {
      log.error({ reason: verdict.line }, 'controller cannot start');
      process.stderr.write(`endpoint-binder controller: ${verdict.line}\n`);
      return 1;
    }
    if (stopPreflight.signal.aborted) return 0;
    const podName = process.env['POD_NAME'];
    const controller = await startController({
      config,
      ...(settings.selector ? { selector: settings.selector } : {}),
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
