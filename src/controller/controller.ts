import type { KubeConfig } from '@kubernetes/client-node';
import { Registry, collectDefaultMetrics } from 'prom-client';
import { ManagementClient } from '../api/client/index.js';
import type { KubernetesOperator } from '../api/schemas/operator.js';
import type { InstallIdentity } from '../binding/identity.js';
import { compileSelector, type EndpointSelector } from '../binding/selector.js';
import type { ProjectionConfig } from '../binding/types.js';
import {
  EventRecorder,
  KubeClient,
  KubeTransport,
  LeaderElector,
  type CacheTuning,
  type InvolvedObject,
} from '../kube/index.js';
import type { Logger } from '../log/logger.js';
import { ClusterState } from './cluster.js';
import type { ControllerConfig } from './config.js';
import { EndpointFeed } from './feed.js';
import { parseHostPort } from '../net/host-port.js';
import { startProbeServer, type ProbeResult, type ProbeServer } from '../net/probe-server.js';
import { InstallRecordWriter } from './install-record-writer.js';
import { controllerMetrics } from './metrics.js';
import { Reconciler } from './reconciler.js';
import { register, type RegistrationSpec } from './registration.js';
import { stateCounts, type StatusDocument } from './status.js';

export const VERSION = '0.1.0';

export interface ControllerOptions {
  config: ControllerConfig;
  kubeConfig: KubeConfig;
  logger: Logger;
  /** The controller's Pod (downward API), for events about endpoints without a Service. */
  pod?: { name: string; namespace: string };
  /** Overrides the leader-election identity (tests). */
  identity?: string;
  /** Faster cache timings (tests). */
  cacheTuning?: Partial<CacheTuning>;
  /** Poll backoff while notifications are down (tests shorten it). */
  poll?: { baseDelayMs: number; maxDelayMs: number };
  random?: () => number;
  /** false: never open the notification stream, learn endpoints by polling only (benchmarks). */
  notifications?: boolean;
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

/** Thrown when the selector does not compile: startup stops with exit code 2. */
export class SelectorError extends Error {
  override name = 'SelectorError';
}

export function compileOrThrow(expression: string): EndpointSelector {
  const r = compileSelector(expression);
  if (!r.ok) throw new SelectorError(`bindings.endpointSelector: ${r.message}`);
  return r.selector;
}

/**
 * Starts the controller: probe server first (unready), then registration (retried through
 * outages), caches, the endpoint feed, leader election and the reconcile loop. Everything
 * runs until `stop()`.
 */
export async function startController(opts: ControllerOptions): Promise<Controller> {
  const { config, logger: log } = opts;
  const selector = compileOrThrow(config.bindings.endpointSelector);
  const identity: InstallIdentity = {
    release: config.releaseName,
    operatorNamespace: config.operatorNamespace,
  };
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'endpoint_binder_process_' });
  const metrics = controllerMetrics(registry);
  const ctl = new AbortController();
  const signal = ctl.signal;

  let operator: KubernetesOperator | undefined;
  let registrationError: string | undefined;
  let elector: LeaderElector | undefined;
  let reconciler: Reconciler | undefined;
  let feed: EndpointFeed | undefined;
  let cluster: ClusterState | undefined;

  const isLeader = (): boolean =>
    elector ? elector.isLeader() : config.leaderElection.enabled ? false : true;
  const isReady = (): boolean => {
    if (!operator || !cluster?.synced) return false;
    if (!config.bindings.enabled) return true;
    // Leader: the first complete sync is applied. Follower: it is computed (warm and ready to lead).
    return reconciler?.caughtUp ?? false;
  };
  const statusDoc = (): StatusDocument => {
    const statuses = reconciler?.statuses ?? [];
    return {
      operator: operator ? { id: operator.id, ingress: operator.binding.ingress_endpoint } : null,
      install: { release: identity.release, operatorNamespace: identity.operatorNamespace },
      selector: config.bindings.endpointSelector,
      bindingsEnabled: config.bindings.enabled,
      leader: isLeader(),
      ready: isReady(),
      notificationsLive: feed?.live ?? false,
      lastFullSync: feed?.lastFullSync !== undefined ? new Date(feed.lastFullSync).toISOString() : null,
      counts: stateCounts(statuses),
      endpoints: statuses.map((s) => ({ ...s })),
    };
  };

  const readiness = (): ProbeResult => {
    const reasons: string[] = [];
    if (!operator)
      reasons.push(
        registrationError
          ? `not registered with the management API: ${registrationError}`
          : 'not registered with the management API yet',
      );
    if (!(cluster?.synced ?? false)) reasons.push('caches of Services and Namespaces not synced yet');
    if (config.bindings.enabled && !(reconciler?.caughtUp ?? false))
      reasons.push('no complete sync of the endpoints applied (leader) or computed (follower) yet');
    return {
      ok: isReady(),
      reasons,
      detail: {
        registered: operator !== undefined,
        ...(registrationError ? { registrationError } : {}),
        cachesSynced: cluster?.synced ?? false,
        leader: isLeader(),
        caughtUp: reconciler?.caughtUp ?? false,
      },
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

  const transport = new KubeTransport(opts.kubeConfig);
  const kube = new KubeClient(transport);
  const recorder = new EventRecorder({
    transport,
    logger: log.child({ component: 'events' }),
    metrics: registry,
    ...(opts.pod ? { instance: opts.pod.name } : {}),
  });
  // The forwarders take the ingress address only from this record (never from a Service).
  const installRecord = new InstallRecordWriter({ kube, identity, log, signal });
  const publishRecord = (op: KubernetesOperator): void =>
    installRecord.publish({ ingressAddress: op.binding.ingress_endpoint ?? undefined, operatorId: op.id });
  const podRef: InvolvedObject | undefined = opts.pod
    ? { kind: 'Pod', apiVersion: 'v1', name: opts.pod.name, namespace: opts.pod.namespace }
    : undefined;

  let resolveDone: (e: Error | undefined) => void = () => undefined;
  const done = new Promise<Error | undefined>((r) => (resolveDone = r));
  const tasks: Promise<unknown>[] = [];
  const caughtUpWaiters = new Set<() => void>();

  const main = async (): Promise<void> => {
    operator = await register(client, spec, log, signal, (e) => {
      registrationError = e;
      metrics.apiCalls.inc({ call: 'register', result: 'error' });
    });
    metrics.apiCalls.inc({ call: 'register', result: 'ok' });
    registrationError = undefined;
    metrics.registered.set(1);
    publishRecord(operator);
    // Only the leader registers again: a stood-down replica (an uninstall holds the lease) must
    // not undo a deregistration while Helm removes it.
    const reRegister = async (): Promise<void> => {
      if (!isLeader()) {
        log.warn({ operatorId: operator?.id }, 'operator registration gone; the leader registers again');
        return;
      }
      log.warn({ operatorId: operator?.id }, 'operator registration gone; registering again');
      operator = await register(client, spec, log, signal);
      publishRecord(operator);
    };

    const projection = (): ProjectionConfig => ({
      identity,
      clusterDomain: config.bindings.clusterDomain,
      portRange: config.bindings.portRange,
      serviceLabels: config.bindings.serviceLabels,
      serviceAnnotations: config.bindings.serviceAnnotations,
    });
    const trigger = (): void => reconciler?.trigger();
    cluster = new ClusterState({
      transport,
      identity,
      log: log.child({ component: 'cache' }),
      metrics: registry,
      onChange: trigger,
      ...(opts.cacheTuning ? { tuning: opts.cacheTuning } : {}),
    });
    feed = new EndpointFeed({
      client,
      operatorId: () => operator!.id,
      log: log.child({ component: 'feed' }),
      metrics,
      resyncIntervalMs: config.resyncIntervalSeconds * 1000,
      onChange: trigger,
      onRegistrationLost: reRegister,
      ...(opts.poll ? { poll: opts.poll } : {}),
      ...(opts.notifications === false ? { notifications: false } : {}),
    });
    reconciler = new Reconciler({
      feed,
      cluster,
      client: kube,
      selector,
      config: projection,
      isLeader,
      writeConcurrency: config.writeConcurrency,
      log: log.child({ component: 'reconciler' }),
      metrics,
      recorder,
      ...(podRef ? { podRef } : {}),
      ...(opts.random ? { random: opts.random } : {}),
      onCaughtUp: () => {
        for (const w of caughtUpWaiters) w();
        caughtUpWaiters.clear();
      },
    });
    if (config.leaderElection.enabled) {
      elector = new LeaderElector({
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
          log.info({}, 'leading: this replica now writes');
          reconciler?.trigger();
        },
        onStoppedLeading: () => log.warn({}, 'stopped leading: this replica writes nothing'),
      });
    }

    cluster.start();
    if (!config.bindings.enabled) {
      log.info({}, 'bindings disabled: registered without the bindings feature; projecting nothing');
      return;
    }
    tasks.push(feed.run(signal));
    tasks.push(reconciler.run(signal));
    const el = elector;
    if (el) {
      tasks.push(
        (async () => {
          while (!signal.aborted) {
            const outcome = await el.run(signal);
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
    registrationError = e.message;
    resolveDone(e);
  });

  return {
    url: probe.url,
    registry,
    status: statusDoc,
    isLeader,
    isReady,
    passCount: () => reconciler?.passCount ?? 0,
    caughtUp(waitSignal?: AbortSignal) {
      if (reconciler?.caughtUp) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const w = (): void => resolve();
        caughtUpWaiters.add(w);
        waitSignal?.addEventListener('abort', () => {
          caughtUpWaiters.delete(w);
          reject(new Error('aborted'));
        });
      });
    },
    done,
    resyncNow: () => (feed ? feed.relist('requested', signal) : Promise.resolve(false)),
    stop() {
      stopping ??= (async () => {
        ctl.abort();
        await started;
        await Promise.allSettled(tasks);
        await elector?.release().catch(() => undefined);
        await cluster?.stop();
        await recorder.stop(2_000);
        await client.close();
        await probe.close();
        resolveDone(undefined);
      })();
      return stopping;
    },
  };
}
