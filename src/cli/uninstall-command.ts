import { z } from 'zod';
import { ManagementClient } from '../api/client/index.js';
import { cleanUpServices, uninstall, type UninstallReport } from '../controller/uninstall.js';
import { KubeClient } from '../kube/index.js';
import { createLogger } from '../log/logger.js';
import { systemClock } from '../time/clock.js';
import { formatCount } from '../time/progress.js';
import { cliKubeConfig } from './kube-source.js';
import { UsageError, type Command } from './command.js';
import { loadControllerSettings } from './controller-settings.js';
import { writeOut } from './output.js';

const usage = `Usage: endpoint-binder uninstall --config <controller config> --policy delete|retain [--services-only] [options]

Applies the uninstall policy of an install (what the Helm chart's pre-delete hook runs). First it
takes the controllers' Lease (<release>-controller) so the running controllers stand down and
write nothing more (it waits out their renew deadline), then:
  delete  deletes every Service of this install (alias and internal; only objects carrying this
          install's ownership labels) and deregisters the operator from the management API
  retain  keeps the Services, annotated endpoint-binder.io/orphaned=<time>, and keeps the
          registration (a later install with the same release name and namespace adopts both)

The install is identified by releaseName and operatorNamespace from the controller's config file
(flags as for \`endpoint-binder controller\`). ENDPOINT_BINDER_API_KEY is needed for delete.

--services-only applies the policy to the Services alone, while the install lives on (what the
chart's post-upgrade hook runs when bindings.enabled turns false): the Lease is neither taken nor
marked, the operator stays registered, and no API key is needed.

Prints a JSON report on stdout; logs, one line per Service it could not handle, and every 2 s
while it works a progress line (applied 2,000 of 6,000 writes) go to stderr. Exit codes: 0 done,
1 some Service could not be handled, 2 bad usage.

Options:
  --config <file>       the controller's config file
  --policy <policy>     delete or retain (required)
  --services-only       only the Services: no Lease, no deregistration
  --kubeconfig <file>   kubeconfig (default: KUBECONFIG, ~/.kube/config, then in-cluster)
  --context <name>      kubeconfig context
  -h, --help            show this help`;

/** The progress line on stderr while Services are deleted or marked. */
export function uninstallProgressLine(done: number, total: number): string {
  return `applied ${formatCount(done)} of ${formatCount(total)} writes\n`;
}

const PolicySchema = z.enum(['delete', 'retain'], { error: 'must be "delete" or "retain"' });

export const uninstallCommand: Command = {
  name: 'uninstall',
  summary: "Apply an install's uninstall policy (delete or retain its Services)",
  usage,
  async run(argv) {
    let policyText: string | undefined;
    let servicesOnly = false;
    const rest: string[] = [];
    for (let i = 0; i < argv.length; i++) {
      const a = argv[i]!;
      if (a === '--services-only') servicesOnly = true;
      else if (a === '--policy') policyText = argv[++i];
      else if (a.startsWith('--policy=')) policyText = a.slice('--policy='.length);
      else rest.push(a);
    }
    const policy = PolicySchema.safeParse(policyText);
    if (!policy.success)
      throw new UsageError(
        `--policy: ${policyText === undefined ? 'is required' : (policy.error.issues[0]?.message ?? '')}`,
      );
    // The API key is only needed to deregister.
    const env = { ...process.env };
    if ((policy.data === 'retain' || servicesOnly) && !env['ENDPOINT_BINDER_API_KEY'])
      env['ENDPOINT_BINDER_API_KEY'] = 'unused';
    // The selector is not needed to uninstall: a broken one must not block `helm uninstall`.
    const settings = await loadControllerSettings(rest, env, { compileSelector: false });
    const { config } = settings;
    // stdout carries only the report, so `uninstall ... > report.json` is machine-readable.
    const log = createLogger({ name: 'uninstall', level: config.logLevel, destination: process.stderr });
    const kube = new KubeClient(
      cliKubeConfig({
        ...(settings.kubeconfig ? { kubeconfigPath: settings.kubeconfig } : {}),
        ...(settings.context ? { context: settings.context } : {}),
      }),
    );
    const identity = { release: config.releaseName, operatorNamespace: config.operatorNamespace };
    const api =
      policy.data === 'delete' && !servicesOnly
        ? new ManagementClient({ baseUrl: config.api.baseUrl, apiKey: config.apiKey, retry: { retries: 3 } })
        : undefined;
    try {
      const progress = {
        clock: systemClock,
        report: (done: number, total: number) => process.stderr.write(uninstallProgressLine(done, total)),
      };
      const report = servicesOnly
        ? await cleanUpServices({ kube, identity, policy: policy.data, log, progress })
        : await uninstall({
            kube,
            api,
            identity,
            policy: policy.data,
            log,
            renewDeadlineMs: config.leaderElection.renewDeadlineSeconds * 1000,
            progress,
          });
      await writeOut(`${JSON.stringify(report)}\n`);
      for (const line of failureLines(report)) process.stderr.write(`${line}\n`);
      return report.failed.length > 0 ? 1 : 0;
    } finally {
      await api?.close();
    }
  },
};

/** One human line per Service the policy could not handle. Pure. */
export function failureLines(report: UninstallReport): string[] {
  const verb = report.policy === 'delete' ? 'delete' : 'mark orphaned';
  return report.failed.map(
    (f) => `endpoint-binder uninstall: could not ${verb} Service ${f.service}: ${f.error}`,
  );
}
