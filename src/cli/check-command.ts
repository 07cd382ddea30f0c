import { parseArgs } from 'node:util';
import { z } from 'zod';
import { configCheck } from '../check/config-check.js';
import { checksDocument, checksExitCode, formatChecks, type CheckResult } from '../check/result.js';
import { UsageError, type Command } from './command.js';
import { CONTROLLER_SETTINGS_FLAGS, readControllerSettings } from './controller-settings.js';
import { writeOut } from './output.js';

const usage = `Usage: endpoint-binder check [--config-only] [--config <file>] [controller options] [-o table|json]

Diagnoses an install: prints one line per fact (✓ holds, ✗ does not, - not checked because an
earlier fact failed) with a one-line hint under every ✗, and exits 0 only when every fact holds.
Reads its settings exactly as \`endpoint-binder controller\` does (the config file, the same flags,
ENDPOINT_BINDER_API_KEY and POD_NAMESPACE from the environment), so it runs the same in the
controller's pod (kubectl exec), on a laptop with a kubeconfig, and against \`npm start\`.

Checks: the config is valid and the selector compiles (--config-only stops here: no network).

Options:
  --config-only       check the config only (file, flags, environment); no network access
  --config <file>     the controller's config file
  --kubeconfig <file> kubeconfig to use (default: in-cluster, then KUBECONFIG, ~/.kube/config)
  --context <name>    kubeconfig context
  (every flag of \`endpoint-binder controller\`, e.g. --api-url, --operator-namespace)
  -o, --output <f>    table (default) or json (the checks as JSON on stdout)
  -h, --help          show this help

Exit codes: 0 every check passed, 1 a check failed (each ✗ says why), 2 bad flags.`;

const ownFlags = z.object({
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
          output: { type: 'string', short: 'o' },
        },
        strict: true,
        allowPositionals: false,
      }).values;
    } catch (err) {
      throw new UsageError(err instanceof Error ? err.message : String(err));
    }
    const own = ownFlags.safeParse({ 'config-only': values['config-only'], output: values['output'] });
    if (!own.success) throw new UsageError(own.error.issues[0]?.message ?? 'bad flags');
    const settings = await readControllerSettings(values, process.env);
    const results: CheckResult[] = [configCheck(settings)];
    await writeOut(
      own.data.output === 'json'
        ? `${JSON.stringify(checksDocument(results), null, 2)}\n`
        : formatChecks(results),
    );
    return checksExitCode(results);
  },
};
