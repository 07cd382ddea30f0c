import type { KubeConfig } from '@kubernetes/client-node';
import type { Registry } from 'prom-client';
import type { InstallIdentity } from '../binding/identity.js';
import type { EndpointSelector } from '../binding/selector.js';
import type { CacheTuning } from '../kube/index.js';
import type { Logger } from '../log/logger.js';
import { systemClock, type Clock } from '../time/clock.js';
import type { CurveBounds } from '../time/curves.js';
import { Latch, unlessAborted } from '../time/latch.js';
import { Notice } from '../time/notice.js';
import type { ControllerConfig } from './config.js';
import type { StatusDocument } from './decide/status.js';
import type { ForwarderSource } from './forwarder-health.js';
import { controllerMetrics } from './metrics.js';
import { apiSide, resyncNow } from './parts/api-side.js';
import type { ControllerBase } from './parts/base.js';
import { kubeSide } from './parts/kube-side.js';
import { Leadership } from './parts/leadership.js';
import { ControllerLifecycle } from './parts/lifecycle.js';
import { listWhenLeading, reconcilerFor } from './parts/pass.js';
import { controllerRegistry } from './parts/registry.js';
import { dataPathFor, serveStatus, StatusView } from './parts/status-view.js';
import { ControllerQueue } from './queue.js';
import { compileOrThrow } from './selector-setting.js';
export { SelectorError, compileOrThrow } from './selector-setting.js';

export { CONTROLLER_STOP_ORDER } from './parts/lifecycle.js';

export const VERSION = '0.1.0';

export interface ControllerOptions {
  config: ControllerConfig;
  /** `config.bindings.endpointSelector` compiled, as the settings reader carries it; compiled here when absent. */
  selector?: EndpointSelector;
  kubeConfig: KubeConfig;
  logger: Logger;
  /** The controller's Pod (downward API), for events about endpoints without a Service. */
  pod?: { name: string; namespace: string };
  /** Overrides the leader-election identity (tests). */
  identity?: string;
  /** Faster cache timings (tests). */
  cacheTuning?: Partial<CacheTuning>;
  /**
   * How long a write the watch has not shown yet overlays the cache when the cache cannot be
   * proven behind it (default 30 s; tests shorten it).
   */
  pendingWriteTtlMs?: number;
  /** Poll backoff while notifications are down (tests shorten it). */
  poll?: CurveBounds;
  /** How many internal Services the install record lists at most (tests lower it). */
  recordCapacity?: number;
  /** Creates per pass at most (one write-ahead record write); tests lower it. */
  intentsPerPass?: number;
  random?: () => number;
  /** Time, sleeps and randomness (tests); `random` above overrides its randomness. */
  clock?: Clock;
  /** false: never open the notification stream, learn endpoints by polling only (benchmarks). */
  notifications?: boolean;
  /**
   * Where the DATA PATH column's forwarders are found (default: this install's forwarder pods)
   * and how often they are read (default 10 s): the demo's in-process forwarder, tests.
   */
  dataPath?: { source?: ForwarderSource; intervalMs?: number };
}

export interface Controller {
  /** `http://host:port` of the probe/status server. */
  url: string;
  status(): StatusDocument;
  isLeader(): boolean;
  isReady(): boolean;
  /** Reconcile passes run so far. */
  passCount(): number;
  /** Resolves when the first complete sync has been applied (or computed, as a follower). */
  caughtUp(signal?: AbortSignal): Promise<void>;
  registry: Registry;
  /** Stops everything; releases the lease so another replica takes over at once. */
  stop(): Promise<void>;
  /** A complete listing of the account's endpoints now (what `resync` and the timer do); true when it succeeded. */
  resyncNow(): Promise<boolean>;
  /** Resolves with an error when the controller stopped by itself (a refused registration). */
  done: Promise<Error | undefined>;
}

/** Changes within this window become one pass. */
const COALESCE_MS = 10;

/** `clock` with `random` as its randomness, when given. */
function withRandom(clock: Clock, random: (() => number) | undefined): Clock {
  return random ? { now: () => clock.now(), sleep: (ms, s) => clock.sleep(ms, s), random } : clock;
}

/**
 * Starts the controller: probe server first (unready), then registration (retried through
 * outages), caches, the endpoint feed, leader election and the reconcile workers. Everything
 * runs until `stop()`.
 *
 * Wiring without cycles or forward references (controller-runtime's builder order): each part
 * is built from parts above it. The work queue first; the sources that add to it (the caches,
 * leadership, the management API side with the feed); the reconciler from all of them; then
 * what reports on them (the status view, the probe server) and the lifecycle that starts and
 * stops them. Where an early part must reach a later one, it is given a `Notice` or a `Latch`
 * built before both, and the later part subscribes to it.
 */
export async function startController(opts: ControllerOptions): Promise<Controller> {
  const { config } = opts;
  const selector = opts.selector ?? compileOrThrow(config.bindings.endpointSelector);
  const identity: InstallIdentity = {
    release: config.releaseName,
    operatorNamespace: config.operatorNamespace,
  };
  const clock = withRandom(opts.clock ?? systemClock, opts.random);
  const registry = controllerRegistry(VERSION);
  const abort = new AbortController();
  const base: ControllerBase = {
    config,
    identity,
    log: opts.logger,
    clock,
    registry,
    metrics: controllerMetrics(registry),
    signal: abort.signal,
    queue: new ControllerQueue(COALESCE_MS, clock),
  };

  const { transport, kube, recorder, podRef, cluster } = kubeSide(base, opts);
  const leadership = new Leadership(base, { transport, cluster, identity: opts.identity });
  const unchangedListing = new Notice();
  const { client, installRecord, registration, feed } = apiSide(base, opts, {
    version: VERSION,
    kube,
    leadership,
    unchangedListing,
  });
  const caughtUp = new Latch();
  const reconciler = reconcilerFor(base, opts, {
    selector,
    feed,
    cluster,
    kube,
    transport,
    installRecord,
    recorder,
    podRef,
    leadership,
    caughtUp,
    unchangedListing,
  });
  listWhenLeading(base, { leadership, registration, feed, reconciler, caughtUp });

  const dataPath = dataPathFor(base, opts, transport);
  const view = new StatusView(base, { registration, cluster, feed, reconciler, leadership, dataPath });
  const probe = await serveStatus(base, view);
  const lifecycle = new ControllerLifecycle(base, {
    abort,
    cluster,
    recorder,
    client,
    installRecord,
    registration,
    feed,
    leadership,
    reconciler,
    dataPath,
    probe,
  });
  return {
    url: probe.url,
    registry,
    status: () => view.status(),
    isLeader: () => leadership.isLeader(),
    isReady: () => view.readiness().ok,
    passCount: () => reconciler.passCount,
    caughtUp: (waitSignal) =>
      reconciler.caughtUp ? Promise.resolve() : unlessAborted(caughtUp.promise, waitSignal),
    done: lifecycle.done,
    resyncNow: () => resyncNow(registration, feed, abort.signal),
    stop: lifecycle.stop,
  };
}
