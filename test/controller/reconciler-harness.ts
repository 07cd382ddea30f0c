import { Registry } from 'prom-client';
import { DEFAULT_DELETE_SAFETY } from '../../src/binding/delete-guard.js';
import { compileSelector } from '../../src/binding/selector.js';
import type { EndpointRecord, ProjectionConfig } from '../../src/binding/types.js';
import { ClusterState } from '../../src/controller/cluster.js';
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
  sim: Kubesim;
  cluster: ClusterState;
  reconciler: Reconciler;
  stop(): Promise<void>;
}

/**
 * The reconciler on a manual clock, leading, with a selector of `true`: caches from kubesim, writes
 * to a faithful fake of the Services API, and a feed that always holds one complete, fresh listing
 * of `endpoints()`. Every delay is the work queue's, so a test moves time itself.
 */
export async function startReconcilerHarness(opts: {
  config: ProjectionConfig;
  clock: ManualClock;
  api: FakeServiceApi;
  queue: ControllerQueue;
  endpoints: () => EndpointRecord[];
  foreignNameGraceMs?: number;
  log?: Logger;
}): Promise<ReconcilerHarness> {
  const { clock, queue } = opts;
  const ctl = new AbortController();
  const sim = await startKubesim({ initialNamespaces: ['default', 'ops', 'prod'] });
  const cluster = new ClusterState({
    transport: new KubeTransport(sim.kubeConfig()),
    identity: opts.config.identity,
    log: silentLogger(),
    metrics: new Registry(),
    onChange: () => queue.requestPass(),
    tuning: fastTuning,
  });
  cluster.start();
  await cluster.waitForSync(ctl.signal);
  const selector = compileSelector('true');
  if (!selector.ok) throw new Error(selector.message);
  const reconciler = new Reconciler({
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
    cluster,
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
  const running = reconciler.run(ctl.signal);
  return {
    sim,
    cluster,
    reconciler,
    stop: async () => {
      ctl.abort();
      await running;
      await cluster.stop();
      await sim.stop();
    },
  };
}
