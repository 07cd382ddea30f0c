import { parseArgs } from 'node:util';
import { z } from 'zod';
import { configCheck } from '../check/config-check.js';
import { checksDocument, checksExitCode, formatChecks, skipped, type CheckResult } from '../check/result.js';
import { runChecks } from '../check/run-checks.js';
import { kubeConfigFrom } from '../kube/index.js';
import { UsageError, type Command } from './command.js';
import { CONTROLLER_SETTINGS_FLAGS, readControllerSettings } from './controller-settings.js';
import { writeOut } from './output.js';

const usage = `Usage: endpoint-binder check [--config-only] [--config <file>] [controller options] [-o table|json]

Diagnoses an install: prints one line per fact (✓ holds, ✗ does not, - not checked because an
earlier fact failed) with a one-line hint under every ✗, and exits 0 only when every fact holds.
Reads its settings exactly as \`endpoint-binder controller\` does (the config file, the same flags,
ENDPOINT_BINDER_API_KEY and POD_NAMESPACE from the environment), so it runs the same in the
controller's pod (kubectl exec), on a laptop with a kubeconfig, and against \`npm start\`.

Checks, in order:
  config            the config is valid and the selector compiles (--config-only stops here: no network)
  api.*             management API reachable, TLS verified, API key accepted, this install's operator
                    record present and matching the config (selector, description, features)
  cluster.*         Kubernetes API reachable; the identity may do every verb the controller needs
                    (SelfSubjectAccessReview); the operator namespace exists; the controller Lease is
                    held and was renewed within its duration
  forwarders.ready  forwarder Pods Ready (their readiness means every port is bound), or with
                    --forwarder-url each forwarder's /readyz
In a cluster: kubectl -n <operator-ns> exec deploy/<release>-controller -- endpoint-binder check

Options:
  --config-only       check the config only (file, flags, environment); no network access
  --config <file>     the controller's config file
  --kubeconfig <file> kubeconfig to use (default: in-cluster, then KUBECONFIG, ~/.kube/config)
  --context <name>    kubeconfig context
  --forwarder-url <url>        a forwarder's HTTP server to ask (repeatable; default: list its Pods)
  --forwarder-selector <sel>   label selector of the forwarder Pods
                               (default app.kubernetes.io/instance=<release>,app.kubernetes.io/component=forwarder)
  (every flag of \`endpoint-binder controller\`, e.g. --api-url, --operator-namespace)
  -o, --output <f>    table (default) or json (the checks as JSON on stdout)
  -h, --help          show this help

Exit codes: 0 every check passed, 1 a check failed (each ✗ says why), 2 bad flags.`;

const ownFlags = z.object({
  'forwarder-url': z
    .array(z.url({ protocol: /^https?$/, error: '--forwarder-url: must be an http:// or https:// URL' }))
    .default([]),
  'forwarder-selector': z.string().min(1, '--forwarder-selector: must not be empty').optional(),
  'config-only': z.boolean().default(false),
  output: z.enum(['table', 'json'], { error: '--output: must be "table" or "json"' }).default('table'),
});

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
          'forwarder-url': { type: 'string', multiple: true },
          'forwarder-selector': { type: 'string' },
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
      output: values['output'],
      'forwarder-url': values['forwarder-url'],
      'forwarder-selector': values['forwarder-selector'],
    });
    if (!own.success) throw new UsageError(own.error.issues[0]?.message ?? 'bad flags');
    const settings = await readControllerSettings(values, process.env);
    const results: CheckResult[] = [configCheck(settings)];
    if (!own.data['config-only']) {
      if (settings.ok) {
        const { config, kubeconfig, context } = settings.settings;
        let kubeConfig;
        let kubeconfigProblem: string | undefined;
        try {
          kubeConfig = kubeConfigFrom({
            ...(kubeconfig ? { kubeconfigPath: kubeconfig } : {}),
            ...(context ? { context } : {}),
          });
        } catch (err) {
          kubeconfigProblem = `kubeconfig: ${err instanceof Error ? err.message : String(err)}; set --kubeconfig / --context or run in the cluster`;
        }
        results.push(
          ...(await runChecks({
            config,
            kubeConfig,
            ...(kubeconfigProblem ? { kubeconfigProblem } : {}),
            forwarderUrls: own.data['forwarder-url'],
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
