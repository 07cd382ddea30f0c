import type { KubeConfig } from '@kubernetes/client-node';
import { Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { ManagementClient } from '../api/client/index.js';
import { staleKnowledge, type DeleteSafety } from '../binding/delete-guard.js';
import type { InstallIdentity } from '../binding/identity.js';
import type { EndpointSelector } from '../binding/selector.js';
import type { ProjectionConfig } from '../binding/types.js';
import {
  EventRecorder,
  KubeClient,
  KubeTransport,
  LeaderElector,
  collectionPath,
  keyOf,
  kinds,
  listAll,
  type CacheTuning,
  type InvolvedObject,
} from '../kube/index.js';
import type { Logger } from '../log/logger.js';
import { parseHostPort } from '../net/host-port.js';
import { startProbeServer, type ProbeResult, type ProbeServer } from '../net/probe-server.js';
import { systemClock, type Clock } from '../time/clock.js';
import type { CurveBounds } from '../time/curves.js';
import { stopInOrder, throwIfStepFailed } from '../time/stop-in-order.js';
import { serviceApi } from './apply.js';
import { ClusterState } from './cluster.js';
import type { ControllerConfig } from './config.js';
import { EndpointFeed } from './feed.js';
import { eventKey } from './decide/reporting.js';
import { controllerMetrics } from './metrics.js';
import { ControllerQueue, PASS } from './queue.js';
import { Reconciler } from './reconciler.js';
import { InstallRecordWriter } from './install-record-writer.js';
import { Registration, type RegistrationSpec } from './registration.js';
import { compileOrThrow } from './selector-setting.js';
export { SelectorError, compileOrThrow } from './selector-setting.js';
import { leadership as leadershipOf, type LeadershipView } from './decide/status-leader.js';
import { trackDeletingServices } from './deleting-services.js';
import { ObservedView, convergenceGap, type ObservedStatus } from './decide/status-observed.js';
import { dataPathCell, dataPathDocument } from './decide/data-path.js';
import { DataPathGatherer, podForwarderSource, type ForwarderSource } from './forwarder-health.js';
import { stateCounts, type StatusDocument } from './decide/status.js';
import { decideReadiness } from './decide/readiness.js';

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

/**
 * `stop()`'s steps in the order they run (docs/controller.md, "Stopping", says why this order).
 * Every step runs even when an earlier one failed; `stop()` then rejects naming the failed steps.
 */
export const CONTROLLER_STOP_ORDER = [
  'flush install record',
  'abort tasks',
  'shut down queue',
  'await startup',
  'await tasks',
  'release lease',
  'stop cluster caches',
  'stop event recorder',
  'close API client',
  'close probe server',
  'resolve done',
] as const;

/** Changes within this window become one pass. */
const COALESCE_MS = 10;
/** Normal Events: a burst of 50, then 10 a second (Warnings are never limited). */
const NORMAL_EVENT_LIMIT = { burst: 50, perSecond: 10 };

/**
 * Starts the controller: probe server first (unready), then registration (retried through
 * outages), caches, the endpoint feed, leader election and the reconcile workers. Everything
 * runs until `stop()`.
 *
 * Wiring without cycles (controller-runtime's builder order): the work queue first; the sources
 * that add to it (leader election, caches, the feed, which gets the registration handle); the
 * reconciler last, from all of them.
 */
export async function startController(opts: ControllerOptions): Promise<Controller> {
  const { config, logger: log } = opts;
  const selector = opts.selector ?? compileOrThrow(config.bindings.endpointSelector);
  const identity: InstallIdentity = {
    release: config.releaseName,
    operatorNamespace: config.operatorNamespace,
  };
  const base = opts.clock ?? systemClock;
  const clock: Clock = opts.random
    ? { now: () => base.now(), sleep: (ms, s) => base.sleep(ms, s), random: opts.random }
    : base;
  const registry = new Registry();
  // prom-client's names already say process_/nodejs_: the prefix is ours alone
  // (endpoint_binder_process_cpu_seconds_total, not endpoint_binder_process_process_…).
  collectDefaultMetrics({ register: registry, prefix: 'endpoint_binder_' });
  new Gauge({
    name: 'endpoint_binder_build_info',
    help: 'Always 1; the labels say which build runs (version, Node.js version).',
    labelNames: ['version', 'node'],
    registers: [registry],
  }).set({ version: VERSION, node: process.version }, 1);
  const metrics = controllerMetrics(registry);
  const ctl = new AbortController();
  const signal = ctl.signal;

  const queue = new ControllerQueue(COALESCE_MS, clock);

  const transport = new KubeTransport(opts.kubeConfig);
  const kube = new KubeClient(transport);
  const recorder = new EventRecorder({
    transport,
    logger: log.child({ component: 'events' }),
    metrics: registry,
    normalRateLimit: NORMAL_EVENT_LIMIT,
    ...(opts.pod ? { instance: opts.pod.name } : {}),
  });
  const podRef: InvolvedObject | undefined = opts.pod
    ? { kind: 'Pod', apiVersion: 'v1', name: opts.pod.name, namespace: opts.pod.namespace }
    : undefined;

  // When this replica's leadership term began: deletes need a complete listing made since then.
  let termStartedAt: number | undefined = config.leaderElection.enabled ? undefined : clock.now();
  let startLeading: () => void = () => undefined;
  const elector = config.leaderElection.enabled
    ? new LeaderElector({
        transport,
        namespace: config.operatorNamespace,
        name: `${config.releaseName}-controller`,
        ...(opts.identity ? { identity: opts.identity } : {}),
        logger: log.child({ component: 'leader' }),
        metrics: registry,
        leaseDurationMs: config.leaderElection.leaseDurationSeconds * 1000,
        renewDeadlineMs: config.leaderElection.renewDeadlineSeconds * 1000,
        retryPeriodMs: config.leaderElection.retryPeriodSeconds * 1000,
        onStartedLeading: () => {
          termStartedAt = clock.now();
          log.info({}, 'leading: this replica now writes; deletes wait for a complete listing of its own');
          startLeading();
          queue.requestPass();
        },
        onStoppedLeading: () => {
          termStartedAt = undefined;
          log.warn({}, 'stopped leading: this replica writes nothing');
        },
      })
    : undefined;
  const isLeader = (): boolean => (elector ? elector.isLeader() : true);

  const client = new ManagementClient({
    baseUrl: config.api.baseUrl,
    apiKey: config.apiKey,
    timeoutMs: config.api.timeoutMs,
    retry: { retries: 3 },
    logger: log.child({ component: 'api-client' }),
  });
  const spec: RegistrationSpec = {
    name: config.releaseName,
    namespace: config.operatorNamespace,
    version: VERSION,
    description: config.registration.description,
    metadata: config.registration.metadata,
    bindingsEnabled: config.bindings.enabled,
    endpointSelector: config.bindings.endpointSelector,
  };
  // The forwarders take the ingress address only from this record (never from a Service).
  const installRecord = new InstallRecordWriter({ kube, identity, log, signal, clock });
  const registration = new Registration({
    client,
    spec,
    log,
    isLeader,
    signal,
    clock,
    onRetry: () => metrics.apiCalls.inc({ call: 'register', result: 'error' }),
    onRegistered: (operator) => {
      metrics.apiCalls.inc({ call: 'register', result: 'ok' });
      metrics.registered.set(1);
      // The install record (the ConfigMap the forwarders read the ingress address from) is
      // published here, after the first registration and after every re-registration.
      installRecord.publish({
        ingressAddress: operator.binding.ingress_endpoint ?? undefined,
        operatorId: operator.id,
      });
      queue.requestPass();
    },
  });

  const cluster = new ClusterState({
    transport,
    identity,
    log: log.child({ component: 'cache' }),
    metrics: registry,
    onChange: () => queue.requestPass(),
    ...(opts.cacheTuning ? { tuning: opts.cacheTuning } : {}),
    ...(opts.pendingWriteTtlMs !== undefined ? { pendingTtlMs: opts.pendingWriteTtlMs } : {}),
  });
  const feed = new EndpointFeed({
    client,
    registration,
    log: log.child({ component: 'feed' }),
    metrics,
    resyncIntervalMs: config.resyncIntervalSeconds * 1000,
    // An endpoint change is what a person waits on: its pass starts at once, not after the
    // window that merges the cluster's event bursts (our own writes' echoes among them); a burst
    // of changes still makes one pass per pass, as changes during a pass make one more.
    onChange: () => queue.add(PASS),
    // A listing changes what deletes may do even when the endpoints are the same: a pass follows
    // when one holds deletes back, or runs now on older knowledge; otherwise none (a resync of
    // 10,000 unchanged endpoints plans nothing).
    onUnchangedListing: () => {
      if (reconciler.awaitsListing) queue.requestPass();
    },
    clock,
    ...(opts.poll ? { poll: opts.poll } : {}),
    ...(opts.notifications === false ? { notifications: false } : {}),
  });

  const deleteSafety: DeleteSafety = {
    knowledgeMaxAgeMs: config.bindings.deletes.knowledgeMaxAgeSeconds * 1000,
  };
  // A new leader lists the account at once (its listing nominates what it lacks for a proof), or,
  // when the first sync is still to be applied, right after it: listing thousands of endpoints
  // beside its projection on the one event loop slows both.
  startLeading = () => {
    if (!registration.operator || !config.bindings.enabled) return;
    const term = termStartedAt;
    const sameTerm = (): boolean => isLeader() && termStartedAt === term;
    void (reconciler.caughtUp ? Promise.resolve() : caughtUp).then(async () => {
      if (!signal.aborted && sameTerm()) await feed.relistFreshUntilDone('leading', signal, sameTerm);
    });
  };
  let resolveCaughtUp: () => void = () => undefined;
  const caughtUp = new Promise<void>((r) => (resolveCaughtUp = r));
  const projection = (): ProjectionConfig => ({
    identity,
    clusterDomain: config.bindings.clusterDomain,
    portRange: config.bindings.portRange,
    serviceLabels: config.bindings.serviceLabels,
    serviceAnnotations: config.bindings.serviceAnnotations,
    namespacePolicy: config.bindings.namespaces,
    groupLimits: config.bindings.limits,
  });
  const reconciler = new Reconciler({
    foreignNameGraceMs: config.bindings.foreignNameGraceSeconds * 1000,
    feed,
    cluster,
    queue,
    api: serviceApi(kube),
    listServices: async (namespace, sig) =>
      (
        await listAll({
          transport,
          path: collectionPath(kinds.service, namespace),
          schema: kinds.service.schema,
          signal: sig,
        })
      ).items,
    selector,
    config: projection,
    isLeader,
    termStartedAt: () => (isLeader() ? termStartedAt : undefined),
    deleteSafety: () => deleteSafety,
    portReservationMs: config.bindings.portReservationSeconds * 1000,
    writeConcurrency: config.writeConcurrency,
    log: log.child({ component: 'reconciler' }),
    metrics,
    recorder,
    clock,
    ...(podRef ? { podRef } : {}),
    onCaughtUp: () => resolveCaughtUp(),
    internalRecord: installRecord,
    ...(opts.recordCapacity !== undefined ? { recordCapacity: opts.recordCapacity } : {}),
    ...(opts.intentsPerPass !== undefined ? { intentsPerPass: opts.intentsPerPass } : {}),
    reportedEvents: async (sig) => {
      const { items } = await listAll({
        transport,
        path: collectionPath(kinds.event, identity.operatorNamespace),
        schema: kinds.event.schema,
        signal: sig,
      });
      return new Set(items.map((e) => eventKey(e.reason ?? '', e.message ?? '')));
    },
  });

  /** Why the endpoint knowledge is too old to act on (and so to be ready to lead), if it is. */
  const stale = (): string | undefined => {
    const snap = feed.snapshot();
    return staleKnowledge(
      {
        now: clock.now(),
        listing: snap.listing,
        streamLive: snap.streamLive,
        generation: snap.registration.generation,
      },
      deleteSafety.knowledgeMaxAgeMs,
    );
  };
  const leaseName = `${config.releaseName}-controller`;
  const leadership = (): LeadershipView => {
    const rec = elector?.observedRecord();
    const nsCache = cluster.namespaces;
    return leadershipOf({
      enabled: elector !== undefined,
      identity: elector?.identity ?? 'this replica',
      leading: isLeader(),
      lease: rec
        ? {
            holder: rec.holderIdentity,
            acquireTime: rec.acquireTime,
            renewTime: rec.renewTime,
            leaseDurationSeconds: rec.leaseDurationSeconds,
          }
        : undefined,
      lastError: elector?.lastError(),
      namespace: config.operatorNamespace,
      leaseName,
      namespaceExists: nsCache.synced
        ? nsCache.get(undefined, config.operatorNamespace) !== undefined
        : undefined,
      nowMs: Date.now(),
    });
  };
  // Every change the Service cache shows (what `observed()` is computed from, with the last pass).
  /**
   * What the cluster holds, as this replica's caches see it (never the writes it issued), kept
   * current per Service event: `/readyz` and `/status` are asked often.
   */
  const observedView = new ObservedView(
    (ref) => cluster.services.get(ref.namespace, ref.name),
    () => isLeader(),
  );
  cluster.services.on('add', (svc) => observedView.serviceChanged(keyOf(svc)));
  cluster.services.on('update', (_old, svc) => observedView.serviceChanged(keyOf(svc)));
  cluster.services.on('delete', (svc) => observedView.serviceChanged(keyOf(svc)));
  const deleting = trackDeletingServices(cluster.services);
  const observed = (): ObservedStatus[] =>
    observedView.current(reconciler.statuses, reconciler.plannedServices);
  let gapMemo: { of: ObservedStatus[]; gap: ReturnType<typeof convergenceGap> } | undefined;
  const observedGap = (): ReturnType<typeof convergenceGap> => {
    const of = observed();
    if (gapMemo?.of !== of) gapMemo = { of, gap: convergenceGap(of) };
    return gapMemo.gap;
  };
  const readiness = (): ProbeResult => {
    const lead = leadership();
    return decideReadiness({
      registered: registration.operator !== undefined,
      registrationError: registration.error,
      bindingsEnabled: config.bindings.enabled,
      cachesSynced: cluster.synced,
      unsyncedReasons: () => cluster.unsyncedReasons(),
      caughtUp: reconciler.caughtUp,
      stale,
      leader: isLeader(),
      leaseHolder: lead.holder,
      cannotLead: lead.cannotLead,
      convergenceGap: observedGap,
    });
  };
  const isReady = (): boolean => readiness().ok;
  // The forwarders' data-path health, read on a timer by every replica (bindings on only: with
  // them off there is no forwarder and the chart grants no pod rights).
  const dataPath = new DataPathGatherer({
    source:
      opts.dataPath?.source ??
      podForwarderSource({ transport, namespace: config.operatorNamespace, release: config.releaseName }),
    clock,
    log: log.child({ component: 'data-path' }),
    registry,
    ...(opts.dataPath?.intervalMs !== undefined ? { intervalMs: opts.dataPath.intervalMs } : {}),
  });
  const statusDoc = (): StatusDocument => {
    const statuses = observed();
    const paths = config.bindings.enabled ? dataPath.snapshot : undefined;
    const now = clock.now();
    const operator = registration.operator;
    const lastFullSync = feed.lastFullSync;
    const ready = readiness();
    return {
      operator: operator ? { id: operator.id, ingress: operator.binding.ingress_endpoint } : null,
      install: { release: identity.release, operatorNamespace: identity.operatorNamespace },
      selector: config.bindings.endpointSelector,
      bindingsEnabled: config.bindings.enabled,
      leader: isLeader(),
      leadership: leadership(),
      ready: ready.ok,
      notReadyReasons: ready.reasons,
      notificationsLive: feed.live,
      lastFullSync: lastFullSync !== undefined ? new Date(lastFullSync).toISOString() : null,
      ...(feed.listingProgress !== undefined
        ? { listing: { listed: feed.listingProgress, total: null } }
        : {}),
      counts: stateCounts(statuses),
      deleting: deleting.list(),
      deletionCandidates: feed.deletionCandidates().map((c) => ({
        id: c.id,
        reason: c.reason,
        since: new Date(c.since).toISOString(),
        ...(c.lastError !== undefined ? { lastError: c.lastError } : {}),
      })),
      leftBehind: {
        count: reconciler.leftBehindAliases.length,
        aliases: reconciler.leftBehindAliases.map((a) => ({ ...a })),
      },
      ...(config.bindings.enabled ? { dataPath: dataPathDocument(paths) } : {}),
      endpoints: statuses.map((s) =>
        config.bindings.enabled ? { ...s, dataPath: dataPathCell(s, paths, now) } : { ...s },
      ),
    };
  };
  const listenAt = parseHostPort(config.http.listen, { allowZero: true, allowEmptyHost: true });
  const probe: ProbeServer = await startProbeServer({
    host: listenAt.host || '0.0.0.0',
    port: listenAt.port,
    registry,
    ready: readiness,
    json: { '/status': statusDoc },
  });
  log.info({ url: probe.url }, 'controller http server listening');

  let resolveDone: (e: Error | undefined) => void = () => undefined;
  const done = new Promise<Error | undefined>((r) => (resolveDone = r));
  const tasks: Promise<unknown>[] = [];

  /** A replica that cannot lead says why: at once when the reason changes, then at least once a minute. */
  const warnWhileUnableToLead = async (): Promise<void> => {
    let last = '';
    let lastAt = -Infinity;
    while (!signal.aborted) {
      const reasons = leadership().cannotLead;
      const text = reasons.join('; ');
      if (text && (text !== last || clock.now() - lastAt >= 60_000)) {
        log.warn({ reasons }, 'this replica cannot lead');
        lastAt = clock.now();
      }
      last = text;
      try {
        await clock.sleep(5_000, signal);
      } catch {
        return;
      }
    }
  };

  /** The API's operator record is put back to the config on every resync (leader only). */
  const repairRecordEveryResync = async (): Promise<void> => {
    while (!signal.aborted) {
      await clock.sleep(config.resyncIntervalSeconds * 1000, signal);
      if (signal.aborted) return;
      await registration.repairDrift().catch(() => []);
    }
  };

  const main = async (): Promise<void> => {
    await registration.register();
    if (!config.bindings.enabled) {
      // No caches either: with bindings off the chart grants no Service or Namespace rights.
      log.info({}, 'bindings disabled: registered without the bindings feature; projecting nothing');
      return;
    }
    cluster.start();
    tasks.push(feed.run(signal));
    tasks.push(warnWhileUnableToLead());
    tasks.push(repairRecordEveryResync());
    tasks.push(reconciler.run(signal));
    tasks.push(dataPath.run(signal));
    if (elector) {
      tasks.push(
        (async () => {
          while (!signal.aborted) {
            const outcome = await elector.run(signal);
            if (outcome !== 'lost') return;
            log.warn({}, 'leadership lost; campaigning again');
          }
        })(),
      );
    }
  };

  let stopping: Promise<void> | undefined;
  const started = main().catch((err: unknown) => {
    if (signal.aborted) return;
    const e = err instanceof Error ? err : new Error(String(err));
    log.error({ error: e.message }, 'controller stopped');
    resolveDone(e);
  });

  return {
    url: probe.url,
    registry,
    status: statusDoc,
    isLeader,
    isReady,
    passCount: () => reconciler.passCount,
    caughtUp(waitSignal?: AbortSignal) {
      if (reconciler.caughtUp) return Promise.resolve();
      if (!waitSignal) return caughtUp;
      return new Promise<void>((resolve, reject) => {
        const onAbort = (): void => reject(new Error('aborted'));
        waitSignal.addEventListener('abort', onAbort, { once: true });
        void caughtUp.then(() => {
          waitSignal.removeEventListener('abort', onAbort);
          resolve();
        });
      });
    },
    done,
    resyncNow: async () => {
      if (!registration.operator) return false;
      await registration.repairDrift().catch(() => []);
      // A listing already running began before the request and may predate what was asked about.
      return feed.relistFresh('requested', signal);
    },
    stop() {
      stopping ??= stopInOrder(CONTROLLER_STOP_ORDER, {
        'flush install record': () => installRecord.flush(2_000),
        'abort tasks': () => ctl.abort(),
        'shut down queue': () => queue.shutDown(),
        'await startup': () => started,
        'await tasks': () => Promise.allSettled(tasks),
        'release lease': () => elector?.release().catch(() => undefined),
        'stop cluster caches': () => cluster.stop(),
        'stop event recorder': () => recorder.stop(2_000),
        'close API client': () => client.close(),
        'close probe server': () => probe.close(),
        'resolve done': () => resolveDone(undefined),
      }).then(throwIfStepFailed);
      return stopping;
    },
  };
}
