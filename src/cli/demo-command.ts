import { resolve } from 'node:path';
import { z } from 'zod';
import { startDemo } from '../demo/demo.js';
import { createLogger } from '../log/logger.js';
import { untilSignal, type Command } from './command.js';
import { parseFlags } from './flags.js';

const Flags = z.strictObject({
  host: z.string().default('127.0.0.1'),
  kubeconfig: z.string().min(1).default('.tmp/demo-kubeconfig.yaml'),
  'log-level': z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('warn'),
});

export const demoCommand: Command = {
  name: 'demo',
  summary: 'Run the embedded default environment: mock API, admin, ingress and kubesim',
  usage: `Usage: endpoint-binder demo [options]

Starts, on loopback ports chosen by the OS, until SIGINT/SIGTERM:
  - the mock management API with a generated development account,
  - its admin interface and its binding ingress (plain TCP on loopback),
  - kubesim, the local Kubernetes API simulator, with namespaces default, kube-system and demo,
  - a TCP echo upstream and one cluster-bound endpoint tcp://echo.demo:7000 served by it.
Prints the URLs, the development API key and authtoken, and writes a kubeconfig for kubesim.

Options:
  --host <addr>          Address everything listens on (default 127.0.0.1)
  --kubeconfig <path>    Where to write the kubeconfig (default .tmp/demo-kubeconfig.yaml)
  --log-level <level>    fatal|error|warn|info|debug|trace|silent (default warn)
  -h, --help             Show this help`,
  async run(argv) {
    const flags = parseFlags(
      argv,
      { host: { type: 'string' }, kubeconfig: { type: 'string' }, 'log-level': { type: 'string' } },
      Flags,
    );
    const logger = createLogger({ level: flags['log-level'], name: 'demo' });
    const demo = await startDemo({ host: flags.host, kubeconfigPath: resolve(flags.kubeconfig), logger });
    const { api } = demo;
    process.stdout.write(
      [
        '',
        'endpoint-binder demo is running (Ctrl-C stops it)',
        '',
        `  Mock management API   ${api.url}`,
        `  Admin interface       ${api.adminUrl ?? ''}`,
        `  Binding ingress       ${api.ingressAddress ?? ''} (plain TCP on loopback)`,
        `  kubesim               ${demo.kubesim.url}`,
        `  kubeconfig            ${demo.kubeconfigPath}`,
        `  Development API key   ${demo.apiKey}`,
        `  Agent authtoken       ${demo.authtoken}`,
        `  Example endpoint      ${demo.exampleEndpoint.url} (${demo.exampleEndpoint.id}) -> ${demo.exampleEndpoint.upstreamUrl}`,
        '',
        'Try:',
        `  curl -s -H "Authorization: Bearer ${demo.apiKey}" -H "Service-Version: 2" ${api.url}/endpoints`,
        `  curl -s -H "Authorization: Bearer ${demo.apiKey}" -H "Service-Version: 2" ${api.url}/tunnels`,
        `  KUBECONFIG=${demo.kubeconfigPath} kubectl get namespaces,services,leases -A`,
        '',
      ].join('\n') + '\n',
    );
    const signal = await untilSignal();
    logger.info({ signal }, 'demo stopping');
    await demo.stop();
    return 0;
  },
};
