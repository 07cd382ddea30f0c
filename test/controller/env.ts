import { randomBytes } from 'node:crypto';
import type { KubeConfig } from '@kubernetes/client-node';
import type { Endpoint } from '../../src/api/schemas/endpoint.js';
import { ENDPOINT_ID_ANNOTATION, ROLE_LABEL } from '../../src/binding/identity.js';
import { resolveControllerConfig, type ControllerConfigInput } from '../../src/controller/config.js';
import { startController, type Controller } from '../../src/controller/controller.js';
import {
  KubeClient,
  collectionPath,
  createCache,
  kinds,
  type Cache,
  type CacheTuning,
  type Service,
} from '../../src/kube/index.js';
import { startKubesim, type Kubesim } from '../../src/kubesim/index.js';
import { silentLogger, type Logger } from '../../src/log/logger.js';
import { fastTuning, waitFor } from '../kube/helpers.js';
import { ACME_KEY, startTestMock, type TestMock } from '../helpers/mock-api.js';

export const OPERATOR_NS = 'endpoint-binder';

export interface ControllerEnv {
  mock: TestMock;
  sim: Kubesim;
  kube: KubeClient;
  /** Every Service write anyone made, as the API server's watch reports them. */
  writes: WriteCounter;
  startController(overrides?: StartControllerOptions): Promise<Controller>;
  createEndpoint(
    url: string,
    extra?: { description?: string; metadata?: string; upstream_url?: string; pooling_enabled?: boolean },
  ): Promise<Endpoint>;
  service(namespace: string, name: string): Promise<Service | undefined>;
  /** Internal Service of an endpoint (found by its id annotation). */
  internalOf(endpointId: string, namespace?: string): Promise<Service | undefined>;
  close(): Promise<void>;
}

export interface WriteCounter {
  cache: Cache<Service>;
  total(): number;
  reset(): void;
}

/** Counts ADDED/MODIFIED/DELETED Service events: one per effective write, independent of the controller. */
async function writeCounter(sim: Kubesim): Promise<WriteCounter> {
  let n = 0;
  const cache = createCache({
    kubeConfig: sim.kubeConfig(),
    path: collectionPath(kinds.service),
    schema: kinds.service.schema,
    logger: silentLogger(),
    options: { ...fastTuning, pageSize: 500 },
  });
  cache.on('add', () => n++);
  cache.on('update', () => n++);
  cache.on('delete', () => n++);
  cache.start();
  await cache.waitForSync();
  const initial = n;
  n -= initial;
  return { cache, total: () => n, reset: () => (n = 0) };
}

export type StartControllerOptions = ControllerConfigInput & {
  identity?: string;
  logger?: Logger;
  pod?: { name: string; namespace: string };
  cacheTuning?: Partial<CacheTuning>;
  pendingWriteTtlMs?: number;
  recordCapacity?: number;
  intentsPerPass?: number;
};

/**
 * Starts controllers with the tests' settings (short lease timings, fast caches) against any mock
 * API and cluster, in this process or in a child (test/helpers/sim-child.ts); each is pushed to
 * `controllers` for the caller to stop.
 */
export function controllerStarter(
  apiUrl: string,
  kubeConfig: KubeConfig,
  controllers: Controller[],
): (overrides?: StartControllerOptions) => Promise<Controller> {
  return async (overrides = {}) => {
    const { identity, logger, pod, cacheTuning, pendingWriteTtlMs, recordCapacity, intentsPerPass, ...cfg } =
      overrides;
    const r = resolveControllerConfig(
      {
        api: { baseUrl: apiUrl },
        operatorNamespace: OPERATOR_NS,
        http: { listen: '127.0.0.1:0' },
        resyncIntervalSeconds: 60,
        ...cfg,
        ...(cfg.bindings ? { bindings: cfg.bindings } : {}),
        leaderElection: {
          leaseDurationSeconds: 2,
          renewDeadlineSeconds: 1.5,
          retryPeriodSeconds: 0.25,
          ...(cfg.leaderElection ?? {}),
        },
      },
      { ENDPOINT_BINDER_API_KEY: ACME_KEY },
    );
    if (!r.ok) throw new Error(r.errors.join('\n'));
    const c = await startController({
      config: r.config,
      kubeConfig,
      logger: logger ?? silentLogger(),
      cacheTuning: { ...fastTuning, pageSize: 500, ...cacheTuning },
      ...(pendingWriteTtlMs !== undefined ? { pendingWriteTtlMs } : {}),
      ...(recordCapacity !== undefined ? { recordCapacity } : {}),
      ...(intentsPerPass !== undefined ? { intentsPerPass } : {}),
      poll: { initialMs: 100, maxMs: 500 },
      identity: identity ?? `test_${randomBytes(3).toString('hex')}`,
      ...(pod ? { pod } : {}),
    });
    controllers.push(c);
    return c;
  };
}

export async function startEnv(
  opts: { namespaces?: string[]; namespaceFinalizeDelayMs?: number } = {},
): Promise<ControllerEnv> {
  const mock = await startTestMock({ ingress: { host: '127.0.0.1' } });
  const sim = await startKubesim({
    initialNamespaces: ['default', 'kube-system', OPERATOR_NS, ...(opts.namespaces ?? ['prod'])],
    namespaceFinalizeDelayMs: opts.namespaceFinalizeDelayMs ?? 20,
    bookmarkIntervalMs: 500,
  });
  const kube = new KubeClient(sim.kubeConfig());
  const writes = await writeCounter(sim);
  const controllers: Controller[] = [];

  return {
    mock,
    sim,
    kube,
    writes,
    startController: controllerStarter(mock.url, sim.kubeConfig(), controllers),
    createEndpoint(url, extra = {}) {
      return mock.client.endpoints.create({ url, bindings: ['kubernetes'], ...extra });
    },
    service: (namespace, name) => kube.get(kinds.service, namespace, name),
    async internalOf(endpointId, namespace = OPERATOR_NS) {
      return writes.cache
        .list()
        .find(
          (s) =>
            s.metadata.namespace === namespace &&
            s.metadata.labels?.[ROLE_LABEL] === 'internal' &&
            s.metadata.annotations?.[ENDPOINT_ID_ANNOTATION] === endpointId,
        );
    },
    async close() {
      for (const c of controllers) await c.stop();
      await writes.cache.stop();
      await mock.close();
      await sim.stop();
    },
  };
}

/** Waits until `fn` holds; a longer default than unit tests, for a loaded 2-core machine. */
export function eventually<T>(
  fn: () => T | Promise<T>,
  what: string,
  timeoutMs = 15_000,
): Promise<NonNullable<T>> {
  return waitFor(fn, what, { timeoutMs, intervalMs: 25 });
}

/** Quiet for a while: no Service write during `ms` (bounded), so "writes nothing" can be checked. */
export async function quietFor(writes: WriteCounter, ms: number): Promise<number> {
  const before = writes.total();
  await new Promise((r) => setTimeout(r, ms));
  return writes.total() - before;
}
