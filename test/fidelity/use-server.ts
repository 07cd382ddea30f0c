import { afterAll, beforeAll } from 'vitest';
import type { ControlPlaneClient } from '../helpers/control-plane/control-plane.js';
import { startKubesim, type KubesimOptions } from '../../src/kubesim/index.js';
import { fidelityServer, type FidelityServer, type ServerKind } from './server.js';
import { budget } from '../helpers/budget.js';

/**
 * The two adapters: kubesim (one per test file, over TLS so that kubectl sends its token) and
 * the shared real control plane of `npm run test:real`. Each returns a FidelityServer that is
 * usable inside tests; it starts in beforeAll and its namespaces are deleted in afterAll.
 */
interface Started {
  server: FidelityServer & { cleanup(): Promise<void> };
  stop(): Promise<void>;
}

function useServer(kind: ServerKind, start: () => Promise<Started>): FidelityServer {
  let current: Started | undefined;
  beforeAll(async () => {
    current = await start();
  }, budget(300_000));
  afterAll(async () => {
    await current?.server.cleanup();
    await current?.stop();
  });
  const get = (): FidelityServer => {
    if (!current) throw new Error(`the ${kind} server is not started (used outside a test?)`);
    return current.server;
  };
  return {
    kind,
    get url() {
      return get().url;
    },
    get caPem() {
      return get().caPem;
    },
    get adminToken() {
      return get().adminToken;
    },
    api: (...a) => get().api(...a),
    watch: (...a) => get().watch(...a),
    kubeConfig: (...a) => get().kubeConfig(...a),
    writeKubeconfig: (...a) => get().writeKubeconfig(...a),
    serviceAccountToken: (...a) => get().serviceAccountToken(...a),
    namespace: (...a) => get().namespace(...a),
    ...(kind === 'kubesim' ? { forgetHistory: () => get().forgetHistory?.() } : {}),
  };
}

/** Timings that keep kubesim's side of the suite fast; semantics are unchanged. */
export const FIDELITY_KUBESIM_OPTIONS: KubesimOptions = {
  tls: true,
  bookmarkIntervalMs: 200,
  namespaceFinalizeDelayMs: 20,
  futureResourceVersionWaitMs: 300,
};

export function useKubesimServer(opts: KubesimOptions = {}): FidelityServer {
  return useServer('kubesim', async () => {
    const sim = await startKubesim({ ...FIDELITY_KUBESIM_OPTIONS, ...opts });
    if (!sim.caPem) throw new Error('kubesim started without TLS');
    const server = fidelityServer({
      kind: 'kubesim',
      url: sim.url,
      caPem: sim.caPem,
      adminToken: sim.adminToken,
      kubeConfig: (t) => sim.kubeConfig(t),
      writeKubeconfig: (path, t) => sim.writeKubeconfig(path, t),
      serviceAccountToken: async (ns, name) => sim.serviceAccountToken(ns, name),
      forgetHistory: () => sim.compact(),
    });
    return { server, stop: () => sim.stop() };
  });
}

export function useRealServer(cluster: ControlPlaneClient): FidelityServer {
  return useServer('kube-apiserver', async () => {
    const server = fidelityServer({
      kind: 'kube-apiserver',
      url: cluster.url,
      caPem: cluster.caPem,
      adminToken: cluster.adminToken,
      kubeConfig: (t) => cluster.kubeConfig(t),
      writeKubeconfig: async (path, t) => cluster.writeKubeconfig(path, t),
      serviceAccountToken: (ns, name) => cluster.serviceAccountToken(ns, name),
    });
    return { server, stop: async () => {} };
  });
}
