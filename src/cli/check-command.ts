import { parseArgs } from 'node:util';
import { z } from 'zod';
import { configCheck } from '../check/config-check.js';
import { checksDocument, checksExitCode, formatChecks, skipped, type CheckResult } from '../check/result.js';
import { runChecks } from '../check/run-checks.js';
import type { IngressCheckSettings } from '../check/ingress-probe.js';
import type { ControllerConfig } from '../controller/config.js';

import { cliKubeConfig } from './kube-source.js';
import { UsageError, type Command } from './command.js';
import { CONTROLLER_SETTINGS_FLAGS, readControllerSettings } from './controller-settings.js';
import { resolveForwarderConfig } from './forwarder-command.js';
import { writeOut } from './output.js';
import { parseRefusalTarget, reportRefusal } from './refusal-event.js';

const usage = `Usage: endpoint-binder check [--config-only] [--config <file>] [controller options]
                            [--forwarder-config <file>] [ingress options] [--endpoint <id|url>] [-o table|json]

Diagnoses an install: prints one line per fact (✓ holds, ✗ does not, - not checked because an
earlier fact failed or a setting it needs is missing) with a one-line hint under every ✗, and
exits 0 only when every fact holds.
Reads its settings exactly as \`endpoint-binder controller\` does (the config file, the same flags,
ENDPOINT_BINDER_API_KEY and POD_NAMESPACE from the environment), so it runs the same in the
controller's pod (kubectl exec), on a laptop with a kubeconfig, and against \`npm start\`.

Checks, in order:
  config            the config is valid and the selector compiles (--config-only stops here: no network)
  api.*             management API reachable, TLS verified, API key accepted, this install's operator
                    record present and matching the config (selector, description, features)
  cluster.*         Kubernetes API reachable; the controller's service account (named on each
                    line; asked by impersonation when check does not run as it, never the caller's
                    own rights) may do every verb the controller needs and holds nothing the chart
                    does not grant (secrets, impersonate, escalate/bind, pods/exec, Service patch,
                    fence policy writes); the operator namespace exists; the controller Lease is
                    held and renewed recently
  forwarders.ready  forwarder Pods Ready (their readiness means every port is bound), or with
                    --forwarder-url each forwarder's /readyz
  controllers.status  the leading controller's /status: ready, no endpoint in error (its not-ready
                    reasons and errors listed; held deletes noted), read from each controller Pod
                    or --controller-url
  ingress           the binding ingress reachable, its TLS certificate verified and the agent
                    authtoken accepted: dialled exactly as the forwarder dials (ingress.address, else
                    the install record ConfigMap <release>-install; ingress.tls, caFile, serverName;
                    ingress.protocol: auto speaks v2 (HTTP/2) when the ingress offers h2, else v1;
                    authtokenFile, else ENDPOINT_BINDER_AUTHTOKEN); the line ends with the protocol
                    spoken ("over v2 (h2)", "over v1 (the ingress offered no h2)"); v2 forced
                    (chart forwarder.ingressProtocol) against an ingress without h2 fails (ERR_797)
  ingress.endpoint  with --endpoint: one connection through the ingress for that endpoint (same
                    protocol), and the ingress's answer (ok, or its ERR_7xx with the text of docs/errors.md)
In a cluster: kubectl -n <operator-ns> exec deploy/<release>-controller -- endpoint-binder check
(the controller's pod does not mount the authtoken: there the ingress line is "-" unless
ENDPOINT_BINDER_AUTHTOKEN is set)

Options:
  --config-only       check the config only (file, flags, environment); no network access
  --refusal-event <namespace>/<job>
                      when the config is refused: also a Warning Event ConfigRefused on that Job,
                      naming each refused setting and the fix (the chart's config-check hook)
  --config <file>     the controller's config file
  --kubeconfig <file> kubeconfig to use (default: KUBECONFIG, ~/.kube/config, then in-cluster)
  --context <name>    kubeconfig context
  --forwarder-url <url>        a forwarder's HTTP server to ask (repeatable; default: list its Pods)
  --controller-url <url>       a controller's HTTP server to read /status from (repeatable; default:
                               each controller Pod, at its pod IP or through the API server's pod proxy)
  --forwarder-selector <sel>   label selector of the forwarder Pods
                               (default app.kubernetes.io/instance=<release>,app.kubernetes.io/component=forwarder)
  --service-account <name>     the controller's service account, for the excess-rights line from
                               outside its pod (default: the one ServiceAccount labelled
                               app.kubernetes.io/instance=<release>,app.kubernetes.io/component=controller)
  --forwarder-config <file>    the forwarder's config file (its ingress.* and authtokenFile are used)
  --ingress-address <host:port>, --ingress-tls <true|false>, --ingress-ca-file <path>,
  --ingress-server-name <name>, --authtoken-file <path>
                               the forwarder's settings of the same names (they win over the file)
  --endpoint <id|url>          open one connection through the ingress for this endpoint (an id
                               is looked up in the management API)
  (every flag of \`endpoint-binder controller\`, e.g. --api-url, --operator-namespace)
  -o, --output <f>    table (default) or json (the checks as JSON on stdout)
  -h, --help          show this help

Exit codes: 0 every check passed, 1 a check failed or was not run (each ✗ and - says why; the
summary line says the same), 2 bad flags.`;

const ownFlags = z.object({
  'controller-url': z
    .array(z.url({ protocol: /^https?$/, error: '--controller-url: must be an http:// or https:// URL' }))
    .default([]),
  'forwarder-url': z
    .array(z.url({ protocol: /^https?$/, error: '--forwarder-url: must be an http:// or https:// URL' }))
    .default([]),
  'forwarder-selector': z.string().min(1, '--forwarder-selector: must not be empty').optional(),
  'service-account': z
    .string()
    .regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, '--service-account: must be a ServiceAccount name (RFC 1123)')
    .optional(),
  'config-only': z.boolean().default(false),
  'refusal-event': z.string().optional(),
  output: z.enum(['table', 'json'], { error: '--output: must be "table" or "json"' }).default('table'),
  'forwarder-config': z.string().min(1, '--forwarder-config: must not be empty').optional(),
  'ingress-address': z.string().optional(),
  'ingress-tls': z
    .enum(['true', 'false'], { error: '--ingress-tls: must be true or false' })
    .transform((v) => v === 'true')
    .optional(),
  'ingress-ca-file': z.string().optional(),
  'ingress-server-name': z.string().optional(),
  'authtoken-file': z.string().optional(),
  endpoint: z.string().min(1, '--endpoint: must be an endpoint id or URL').optional(),
});
type OwnFlags = z.infer<typeof ownFlags>;

/** The forwarder's ingress settings for this install, read as `endpoint-binder forwarder` reads them. */
async function ingressSettings(config: ControllerConfig, own: OwnFlags): Promise<IngressCheckSettings> {
  const flags = {
    ...(own['forwarder-config'] ? { config: own['forwarder-config'] } : {}),
    'release-name': config.releaseName,
    'operator-namespace': config.operatorNamespace,
    ...(own['ingress-address'] !== undefined ? { 'ingress-address': own['ingress-address'] } : {}),
    ...(own['ingress-tls'] !== undefined ? { 'ingress-tls': own['ingress-tls'] } : {}),
    ...(own['ingress-ca-file'] !== undefined ? { 'ingress-ca-file': own['ingress-ca-file'] } : {}),
    ...(own['ingress-server-name'] !== undefined
      ? { 'ingress-server-name': own['ingress-server-name'] }
      : {}),
    ...(own['authtoken-file'] !== undefined ? { 'authtoken-file': own['authtoken-file'] } : {}),
  };
  const endpoint = own.endpoint !== undefined ? { endpoint: own.endpoint } : {};
  try {
    return {
      forwarder: await resolveForwarderConfig(flags, process.env),
      authtokenFromEnv: process.env['ENDPOINT_BINDER_AUTHTOKEN'],
      ...endpoint,
    };
  } catch (err) {
    const problem = (err instanceof Error ? err.message : String(err)).replace(/\n\s*/g, '; ');
    return { forwarder: { problem: `forwarder settings: ${problem}` }, ...endpoint };
  }
}

export const checkCommand: Command = {
  name: 'check',
  summary: 'Diagnose an install: config, API, cluster, permissions, Lease, forwarders, ingress',
  usage,
  async run(argv) {
    let values: Record<string, string | boolean | string[] | boolean[] | undefined>;
    try {
      values = parseArgs({
        args: argv,
        options: {
          ...CONTROLLER_SETTINGS_FLAGS,
          'config-only': { type: 'boolean' },
          'refusal-event': { type: 'string' },
          'forwarder-url': { type: 'string', multiple: true },
          'controller-url': { type: 'string', multiple: true },
          'forwarder-selector': { type: 'string' },
          'service-account': { type: 'string' },
          'forwarder-config': { type: 'string' },
          'ingress-address': { type: 'string' },
          'ingress-tls': { type: 'string' },
          'ingress-ca-file': { type: 'string' },
          'ingress-server-name': { type: 'string' },
          'authtoken-file': { type: 'string' },
          endpoint: { type: 'string' },
          output: { type: 'string', short: 'o' },
        },
        strict: true,
        allowPositionals: false,
      }).values;
    } catch (err) {
      throw new UsageError(err instanceof Error ? err.message : String(err));
    }
    const own = ownFlags.safeParse({
      'config-only': values['config-only'],
      'refusal-event': values['refusal-event'],
      output: values['output'],
      'forwarder-url': values['forwarder-url'],
      'controller-url': values['controller-url'],
      'forwarder-selector': values['forwarder-selector'],
      'service-account': values['service-account'],
      'forwarder-config': values['forwarder-config'],
      'ingress-address': values['ingress-address'],
      'ingress-tls': values['ingress-tls'],
      'ingress-ca-file': values['ingress-ca-file'],
      'ingress-server-name': values['ingress-server-name'],
      'authtoken-file': values['authtoken-file'],
      endpoint: values['endpoint'],
    });
    if (!own.success) throw new UsageError(own.error.issues[0]?.message ?? 'bad flags');
    const refusal = own.data['refusal-event'] ? parseRefusalTarget(own.data['refusal-event']) : undefined;
    if (refusal && 'problem' in refusal) throw new UsageError(refusal.problem);
    const settings = await readControllerSettings(values, process.env);
    const results: CheckResult[] = [configCheck(settings)];
    if (refusal && !settings.ok) {
      const kubeconfig = typeof values['kubeconfig'] === 'string' ? values['kubeconfig'] : undefined;
      let why: string | undefined;
      try {
        why = await reportRefusal(
          cliKubeConfig(kubeconfig ? { kubeconfigPath: kubeconfig } : {}),
          refusal,
          settings.problems,
        );
      } catch (err) {
        why = err instanceof Error ? err.message : String(err);
      }
      process.stderr.write(
        why === undefined
          ? `Event ConfigRefused written in namespace ${refusal.namespace} (kubectl -n ${refusal.namespace} get events)\n`
          : `the ConfigRefused Event could not be written in namespace ${refusal.namespace}: ${why}\n`,
      );
    }
    if (!own.data['config-only']) {
      if (settings.ok) {
        const { config, kubeconfig, context } = settings.settings;
        let kubeConfig;
        let kubeconfigProblem: string | undefined;
        try {
          kubeConfig = cliKubeConfig({
            ...(kubeconfig ? { kubeconfigPath: kubeconfig } : {}),
            ...(context ? { context } : {}),
          });
        } catch (err) {
          const text = err instanceof Error ? err.message : String(err);
          kubeconfigProblem = /^no Kubernetes configuration found|has no context/.test(text)
            ? text
            : `kubeconfig: ${text}; set --kubeconfig / --context or run in the cluster`;
        }
        results.push(
          ...(await runChecks({
            config,
            kubeConfig,
            ...(kubeconfigProblem ? { kubeconfigProblem } : {}),
            forwarderUrls: own.data['forwarder-url'],
            controllerUrls: own.data['controller-url'],
            ...(own.data['service-account'] ? { controllerServiceAccount: own.data['service-account'] } : {}),
            ingress: await ingressSettings(config, own.data),
            forwarderSelector:
              own.data['forwarder-selector'] ??
              `app.kubernetes.io/instance=${config.releaseName},app.kubernetes.io/component=forwarder`,
          })),
        );
      } else {
        results.push(skipped('api', 'management API and cluster checks', 'the config is not valid'));
      }
    }
    await writeOut(
      own.data.output === 'json'
        ? `${JSON.stringify(checksDocument(results), null, 2)}\n`
        : formatChecks(results),
    );
    return checksExitCode(results);
  },
};
