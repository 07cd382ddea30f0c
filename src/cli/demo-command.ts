import { resolve } from 'node:path';
import { z } from 'zod';
import { OPERATOR_NAMESPACE, startDemo } from '../demo/demo.js';
import { runDemoScript } from '../demo/script.js';
import { createLogger } from '../log/logger.js';
import { untilSignal, type Command } from './command.js';
import { parseFlags } from './flags.js';

const Flags = z.strictObject({
  host: z.string().default('127.0.0.1'),
  kubeconfig: z.string().min(1).default('.tmp/demo-kubeconfig.yaml'),
  'log-level': z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('silent'),
  once: z.boolean().default(false),
});

const usage = `Usage: endpoint-binder demo [options]

Runs the whole product on loopback (ports chosen by the OS) and shows it working:
  - the mock management API with a development account, its admin interface and binding ingress,
  - kubesim, the local Kubernetes API simulator (TLS; a kubeconfig is written for kubectl),
  - an HTTP and a TCP echo upstream, the controller and the forwarder;
then creates sample endpoints (HTTP, TCP, one in a namespace that does not exist yet, one the
selector excludes), prints the projected Services and the status table, sends an HTTP request and
a TCP exchange through the forwarder, creates the missing namespace and shows its alias appear.
Keeps running until Ctrl-C with the addresses printed.

Options:
  --once                 run the script, stop, exit 0 only if every step worked
  --host <addr>          address everything listens on (default 127.0.0.1)
  --kubeconfig <path>    where to write the kubeconfig (default .tmp/demo-kubeconfig.yaml)
  --log-level <level>    JSON logs of every part on stderr: fatal|error|warn|info|debug|trace|silent (default silent)
  -h, --help             show this help`;

export const demoCommand: Command = {
  name: 'demo',
  summary: 'Run everything on loopback and show an endpoint projected and reached (npm start)',
  usage,
  async run(argv) {
    const flags = parseFlags(
      argv,
      {
        host: { type: 'string' },
        kubeconfig: { type: 'string' },
        'log-level': { type: 'string' },
        once: { type: 'boolean' },
      },
      Flags,
    );
    const out = (text: string): void => void process.stdout.write(text);
    const logger = createLogger({ level: flags['log-level'], name: 'demo', destination: process.stderr });
    out('endpoint-binder demo: starting every part on loopback\n\n');
    const demo = await startDemo({
      host: flags.host,
      kubeconfigPath: resolve(flags.kubeconfig),
      logger,
      progress: (line) => out(`  started ${line}\n`),
    });
    try {
      const ok = await runDemoScript(demo, out, flags.host);
      out(`\n${ok ? 'Every step worked.' : 'Some step failed (see ✗ above).'}\n`);
      if (flags.once) return ok ? 0 : 1;
      const { api } = demo;
      out(
        [
          '',
          'Still running (Ctrl-C stops it). Try:',
          '',
          ...demoCommands(demo),
          '',
          `  Management API    ${api.url}`,
          `  API key           ${demo.apiKey}`,
          `  Agent authtoken   ${demo.authtoken}`,
          `  Admin interface   ${api.adminUrl ?? ''}`,
          `  Controller        ${demo.controller.url}/status`,
          `  Operator ns       ${OPERATOR_NAMESPACE}`,
          '',
          'Add an endpoint (it is projected within a second):',
          `  curl -s -X POST ${api.url}/endpoints -H "Authorization: Bearer ${demo.apiKey}" -H "Service-Version: 2" \\`,
          `    -H "Content-Type: application/json" -d '{"url":"http://hello.demo","bindings":["kubernetes"],"upstream_url":"${demo.upstreams.http}"}'`,
          '',
        ].join('\n'),
      );
      await untilSignal();
      return 0;
    } finally {
      await demo.stop();
    }
  },
};

/** The lines `npm start` prints to run `check` and `status` against it (each runnable as printed). */
export function demoCommands(demo: {
  kubeconfigPath: string;
  configPath: string;
  apiKey: string;
  authtoken: string;
  controller: { url: string };
  forwarder: { httpAddress: { address: string } };
}): string[] {
  const forwarderUrl = `http://${demo.forwarder.httpAddress.address}`;
  return [
    `  export KUBECONFIG=${demo.kubeconfigPath}`,
    `  export ENDPOINT_BINDER_API_KEY=${demo.apiKey} ENDPOINT_BINDER_AUTHTOKEN=${demo.authtoken}`,
    `  kubectl get svc -A -l app.kubernetes.io/managed-by=endpoint-binder -L endpoint-binder.io/state`,
    `  npx endpoint-binder check --config ${demo.configPath} --forwarder-url ${forwarderUrl} --controller-url ${demo.controller.url} --ingress-tls false`,
    `  npx endpoint-binder status --url ${demo.controller.url}`,
  ];
}
