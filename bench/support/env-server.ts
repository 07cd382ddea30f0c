/**
 * The environment the controller benchmark runs against, in a process of its own so the
 * benchmark process measures the controller alone: the mock management API (one account, no
 * practical rate limit) with its admin interface, and kubesim with the given namespaces.
 * Prints one JSON line with the addresses, then runs until stdin closes or SIGTERM.
 *
 *   tsx bench/support/env-server.ts <kubeconfig path> <namespace count>
 */
import { startKubesim } from '../../src/kubesim/index.js';
import { startMockApi } from '../../src/mock/server.js';

const [kubeconfig, nsCount] = process.argv.slice(2);
if (!kubeconfig) throw new Error('usage: env-server.ts <kubeconfig path> <namespace count>');
const namespaces = Array.from({ length: Number(nsCount ?? '100') }, (_, i) => `ns-${i}`);

const api = await startMockApi({
  config: {
    accounts: [{ id: 'bench', api_keys: ['bench-api-key-0123456789'], authtokens: ['bench-authtoken-0123'] }],
    rate_limit: { requests: 10_000_000, window_seconds: 1 },
    events: { retention: 100_000, max_buffered_bytes: 64 * 1024 * 1024 },
  },
  admin: {},
  ingress: {},
});
const sim = await startKubesim({
  initialNamespaces: ['default', 'kube-system', 'endpoint-binder', ...namespaces],
  compactionWindow: 100_000,
});
await sim.writeKubeconfig(kubeconfig);
process.stdout.write(
  `${JSON.stringify({ apiUrl: api.url, adminUrl: api.adminUrl, apiKey: 'bench-api-key-0123456789', kubeconfig })}\n`,
);
const stop = async (): Promise<void> => {
  await sim.stop();
  await api.stop();
  process.exit(0);
};
process.stdin.on('end', () => void stop());
process.stdin.resume();
process.on('SIGTERM', () => void stop());
