import { Registry } from 'prom-client';
import { DEFAULT_DELETE_SAFETY } from '../../src/binding/delete-guard.js';
import { compileSelector } from '../../src/binding/selector.js';
import type { EndpointRecord, ProjectionConfig } from '../../src/binding/types.js';
import { ClusterState, type ClusterReadModel } from '../../src/controller/cluster.js';
import type { FeedSnapshot } from '../../src/controller/feed.js';
import { controllerMetrics } from '../../src/controller/metrics.js';
import type { ControllerQueue } from '../../src/controller/queue.js';
import { Reconciler } from '../../src/controller/reconciler.js';
import { KubeTransport } from '../../src/kube/index.js';
import { startKubesim, type Kubesim } from '../../src/kubesim/index.js';
import { silentLogger, type Logger } from '../../src/log/logger.js';
import { fastTuning } from '../kube/helpers.js';
import type { ManualClock } from '../helpers/manual-clock.js';
import type { FakeServiceApi } from './fake-service-api.js';
import { FakeCluster } from './fake-cluster.js';

/** The projection config the harness tests share: release `r`, operator namespace `ops`. */
export const HARNESS_CONFIG: ProjectionConfig = {
  identity: { release: 'r', operatorNamespace: 'ops' },
  clusterDomain: 'cluster.local',
  portRange: { min: 10000, max: 10999 },
  serviceLabels: {},
  serviceAnnotations: {},
};

/** An endpoint record as the feed holds it. */
export const ep = (id: string, url: string): EndpointRecord => ({
  id,
  url,
  created_at: '2026-01-01T00:00:00Z',
});

export interface ReconcilerHarness {
  /** Undefined on the in-memory cluster. */
  sim: Kubesim | undefined;
  cluster: ClusterReadModel;
  reconciler: Reconciler;
  stop(): Promise<void>;
}

/**
 * The reconciler on a manual clock, leading, with a selector of `true`: caches from kubesim, writes
 * to a faithful fake of the Services API, and a feed that always holds one complete, fresh listing
 * of `endpoints()`. Every delay is the work queue's, so a test moves time itself.
 *
 * `cluster: 'memory'` reads the cluster from an in-memory stand-in for the watches over the same
 * fake Services API (fake-cluster.ts: a watch that is never behind) instead of kubesim's caches
 * (which never see the fake API's writes, so the pass sees them as pending writes only).
 */
export async function startReconcilerHarness(opts: {
  config: ProjectionConfig;
  clock: ManualClock;
  api: FakeServiceApi;
  queue: ControllerQueue;
  endpoints: () => EndpointRecord[];
  foreignNameGraceMs?: number;
  log?: Logger;
  cluster?: 'kubesim' | 'memory';
}): Promise<ReconcilerHarness> {
  const { queue } = opts;
  const ctl = new AbortController();
  const made =
    opts.cluster === 'memory'
      ? memoryCluster(opts.config, opts.api, queue)
      : await kubesimCluster(opts.config, queue, ctl.signal);
  const { sim, cluster } = made;
  const reconciler = harnessReconciler({ ...opts, cluster });
  const running = reconciler.run(ctl.signal);
  return {
    sim,
    cluster,
    reconciler,
    stop: async () => {
      ctl.abort();
      await running;
      await made.stop();
    },
  };
}

interface HarnessCluster {
  sim: Kubesim | undefined;
  cluster: ClusterReadModel;
  stop(): Promise<void>;
}

const NAMESPACES = ['default', 'ops', 'prod'];

async function kubesimCluster(
  config: ProjectionConfig,
  queue: ControllerQueue,
  signal: AbortSignal,
): Promise<HarnessCluster> {
  const sim = await startKubesim({ initialNamespaces: NAMESPACES });
  const cluster = new ClusterState({
    transport: new KubeTransport(sim.kubeConfig()),
    identity: config.identity,
    log: silentLogger(),
    metrics: new Registry(),
    onChange: () => queue.requestPass(),
    tuning: fastTuning,
  });
  cluster.start();
  await cluster.waitForSync(signal);
  return {
    sim,
    cluster,
    stop: async () => {
      await cluster.stop();
      await sim.stop();
    },
  };
}

function memoryCluster(
  config: ProjectionConfig,
  api: FakeServiceApi,
  queue: ControllerQueue,
): HarnessCluster {
  const cluster = new FakeCluster({ identity: config.identity, source: api, namespaces: NAMESPACES });
  // Synced from the start: the first pass is asked for at once, as ClusterState asks for it when
  // its last cache syncs.
  queue.requestPass();
  return { sim: undefined, cluster, stop: async () => undefined };
}

/**
 * The harness's Reconciler, not running: on `cluster`, leading, with a selector of `true` and a
 * feed that always holds one complete, fresh listing of `endpoints()`. A test may call its
 * `reconcile()` itself and read the queue calls it returns.
 */
export function harnessReconciler(opts: {
  config: ProjectionConfig;
  clock: ManualClock;
  api: FakeServiceApi;
  queue: ControllerQueue;
  endpoints: () => EndpointRecord[];
  cluster: ClusterReadModel;
  foreignNameGraceMs?: number;
  log?: Logger;
}): Reconciler {
  const { clock, queue } = opts;
  const selector = compileSelector('true');
  if (!selector.ok) throw new Error(selector.message);
  return new Reconciler({
    feed: {
      snapshot: (): FeedSnapshot => ({
        endpoints: opts.endpoints(),
        complete: true,
        lastFullSyncAt: clock.now(),
        registration: { operatorId: 'k8sop_x', generation: 1 },
        listing: { seq: 1, startedAt: 0, finishedAt: clock.now(), generation: 1 },
        streamLive: true,
        deletionsPending: 0,
        candidates: [],
        provenGone: new Set(),
        takenAt: clock.now(),
      }),
      nominate: () => undefined,
    },
    cluster: opts.cluster,
    queue,
    api: opts.api,
    listServices: async () => [],
    selector: selector.selector,
    config: () => opts.config,
    isLeader: () => true,
    termStartedAt: () => 0,
    deleteSafety: () => DEFAULT_DELETE_SAFETY,
    writeConcurrency: 4,
    log: opts.log ?? silentLogger(),
    metrics: controllerMetrics(new Registry()),
    clock,
    ...(opts.foreignNameGraceMs !== undefined ? { foreignNameGraceMs: opts.foreignNameGraceMs } : {}),
  });
}
