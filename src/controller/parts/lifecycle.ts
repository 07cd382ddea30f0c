import type { ManagementClient } from '../../api/client/index.js';
import type { EventRecorder } from '../../kube/index.js';
import type { ProbeServer } from '../../net/probe-server.js';
import { Latch, once } from '../../time/latch.js';
import { stopInOrder, throwIfStepFailed } from '../../time/stop-in-order.js';
import type { ClusterState } from '../cluster.js';
import type { EndpointFeed } from '../feed.js';
import type { InstallRecordWriter } from '../install-record-writer.js';
import type { Registration } from '../registration.js';
import type { DataPathGatherer } from '../forwarder-health.js';
import type { Reconciler } from '../reconciler.js';
import { repairRecordEveryResync } from './api-side.js';
import type { ControllerBase } from './base.js';
import type { Leadership } from './leadership.js';

/**
 * `stop()`'s steps in the order they run (docs/controller.md, "Stop order", says why this order).
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

export interface LifecycleParts {
  /** Aborts the base's signal (`stop()`'s second step). */
  abort: AbortController;
  cluster: ClusterState;
  recorder: EventRecorder;
  client: ManagementClient;
  installRecord: InstallRecordWriter;
  registration: Registration;
  feed: EndpointFeed;
  leadership: Leadership;
  reconciler: Reconciler;
  dataPath: DataPathGatherer;
  probe: ProbeServer;
}

/**
 * What runs once the parts exist: registration (retried through outages), then, with bindings
 * on, the caches and the background loops (the feed, the reconcile workers, the data path,
 * the election and its warnings, the record repair); and `stop()`, the declared stop order.
 */
export class ControllerLifecycle {
  private readonly tasks: Promise<unknown>[] = [];
  private readonly stopped = new Latch<Error | undefined>();
  private readonly started: Promise<void>;
  /** Stops everything in CONTROLLER_STOP_ORDER; a second call returns the first one's promise. */
  readonly stop: () => Promise<void>;

  constructor(
    private readonly base: ControllerBase,
    private readonly o: LifecycleParts,
  ) {
    const { signal } = base;
    this.started = this.start().catch((err: unknown) => {
      if (signal.aborted) return;
      const e = err instanceof Error ? err : new Error(String(err));
      base.log.error({ error: e.message }, 'controller stopped');
      this.stopped.resolve(e);
    });
    this.stop = once(() => this.stopInOrder());
  }

  /** Resolves with an error when the controller stopped by itself (a refused registration). */
  get done(): Promise<Error | undefined> {
    return this.stopped.promise;
  }

  private async start(): Promise<void> {
    const { config, log, clock, signal } = this.base;
    const { registration, feed, leadership, reconciler, dataPath } = this.o;
    await registration.register();
    if (!config.bindings.enabled) {
      // No caches either: with bindings off the chart grants no Service or Namespace rights.
      log.info({}, 'bindings disabled: registered without the bindings feature; projecting nothing');
      return;
    }
    this.o.cluster.start();
    const resyncMs = config.resyncIntervalSeconds * 1000;
    this.tasks.push(
      feed.run(signal),
      leadership.warnWhileUnableToLead(signal),
      repairRecordEveryResync(registration, resyncMs, clock, signal),
      reconciler.run(signal),
      dataPath.run(signal),
      leadership.campaign(signal),
    );
  }

  private stopInOrder(): Promise<void> {
    const { queue } = this.base;
    const { abort, cluster, recorder, client, installRecord, leadership, probe } = this.o;
    return stopInOrder(CONTROLLER_STOP_ORDER, {
      'flush install record': () => installRecord.flush(2_000),
      'abort tasks': () => abort.abort(),
      'shut down queue': () => queue.shutDown(),
      'await startup': () => this.started,
      'await tasks': () => Promise.allSettled(this.tasks),
      'release lease': () => leadership.release(),
      'stop cluster caches': () => cluster.stop(),
      'stop event recorder': () => recorder.stop(2_000),
      'close API client': () => client.close(),
      'close probe server': () => probe.close(),
      'resolve done': () => this.stopped.resolve(undefined),
    }).then(throwIfStepFailed);
  }
}
