/**
 * The environment the controller benchmark runs against, in a process of its own so the
 * benchmark process measures the controller alone: the mock management API (one account, no
 * practical rate limit) with its admin interface, and a cluster with the given namespaces:
 * kubesim, or (target `real`) a real etcd + kube-apiserver built by `npm run control-plane:build`
 * (test/helpers/control-plane; no controller-manager: nothing here needs one).
 * Prints one JSON line with the addresses, then runs until stdin closes or SIGTERM.
 *
 *   tsx bench/support/env-server.ts <kubeconfig path> <namespace count> [kubesim|real]
 */
import { locateControlPlane } from '../../test/helpers/control-plane/binaries.js';
import { startControlPlane } from '../../test/helpers/control-plane/control-plane.js';
import { startKubesim } from '../../src/kubesim/index.js';
import { startMockApi } from '../../src/mock/server.js';

const [kubeconfig, nsCount, target = 'kubesim'] = process.argv.slice(2);
if (!kubeconfig) throw new Error('usage: env-server.ts <kubeconfig path> <namespace count> [kubesim|real]');
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
const cluster = target === 'real' ? await startReal() : await startSim();
process.stdout.write(
  `${JSON.stringify({ apiUrl: api.url, adminUrl: api.adminUrl, apiKey: 'bench-api-key-0123456789', kubeconfig })}\n`,
);
const stop = async (): Promise<void> => {
  await cluster.stop();
  await api.stop();
  process.exit(0);
};
process.stdin.on('end', () => void stop());
process.stdin.resume();
process.on('SIGTERM', () => void stop());

async function startSim(): Promise<{ stop(): Promise<void> }> {
  const sim = await startKubesim({
    initialNamespaces: ['default', 'kube-system', 'endpoint-binder', ...namespaces],
    compactionWindow: 100_000,
  });
  await sim.writeKubeconfig(kubeconfig!);
  return sim;
}

async function startReal(): Promise<{ stop(): Promise<void> }> {
  const found = locateControlPlane();
  if ('skip' in found) throw new Error(`--target real: ${found.skip}`);
  const cp = await startControlPlane({ bin: found.bin, controllers: [] });
  for (const name of ['endpoint-binder', ...namespaces]) {
    const r = await cp.fetch('POST', '/api/v1/namespaces', { metadata: { name } });
    if (r.status !== 201) throw new Error(`namespace ${name}: ${r.status} ${JSON.stringify(r.body)}`);
  }
  cp.writeKubeconfig(kubeconfig!);
  process.stderr.write(`[bench] real control plane ${cp.version} at ${cp.url}\n`);
  return cp;
}
