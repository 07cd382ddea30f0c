/**
 * The mock management API (the two test accounts) and kubesim, in a process of their own: a test
 * that measures the controller's event loop runs them here, as production runs them in other
 * processes, so their work does not block the loop under test. Prints one JSON line with the
 * addresses, then runs until stdin closes or SIGTERM.
 *
 *   node --import tsx test/helpers/sim-process.ts <kubeconfig path> <namespace>...
 */
import { startKubesim } from '../../src/kubesim/index.js';
import { startMockApi } from '../../src/mock/server.js';
import { twoAccounts } from './mock-api.js';

const [kubeconfig, ...namespaces] = process.argv.slice(2);
if (!kubeconfig) throw new Error('usage: sim-process.ts <kubeconfig path> <namespace>...');

const api = await startMockApi({ config: twoAccounts, admin: {}, ingress: { host: '127.0.0.1' } });
const sim = await startKubesim({
  initialNamespaces: ['default', 'kube-system', 'endpoint-binder', ...namespaces],
  namespaceFinalizeDelayMs: 20,
  bookmarkIntervalMs: 500,
  compactionWindow: 100_000,
});
await sim.writeKubeconfig(kubeconfig);
process.stdout.write(`${JSON.stringify({ apiUrl: api.url, adminUrl: api.adminUrl ?? '', kubeconfig })}\n`);

const stop = async (): Promise<void> => {
  await sim.stop();
  await api.stop();
  process.exit(0);
};
process.stdin.on('end', () => void stop());
process.stdin.resume();
process.on('SIGTERM', () => void stop());
