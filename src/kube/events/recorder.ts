import type { KubeConfig } from '@kubernetes/client-node';
import type { Registry } from 'prom-client';
import type { Logger } from '../../log/logger.js';
import { systemClock, type Clock } from '../../time/clock.js';
import { describeError, isNotFound } from '../errors.js';
import { kubeMetrics, type KubeMetrics } from '../metrics.js';
import type { KubeObject, ObjectReference } from '../objects.js';
import { kinds } from '../resources.js';
import { KubeTransport } from '../transport.js';
import { KubeClient } from '../write.js';
import { TokenBucket } from './token-bucket.js';
import {
  AggregationCache,
  aggregationKey,
  eventName,
  eventNamespace,
  eventTimestamp,
  isValidReason,
  truncateMessage,
  type EventInput,
  type EventType,
} from './aggregate.js';

export const EVENT_COMPONENT = 'endpoint-binder';

export interface EventRecorderOptions {
  kubeConfig?: KubeConfig;
  transport?: KubeTransport;
  logger: Logger;
  metrics?: Registry;
  clock?: Clock;
  /** `source.component` / `reportingComponent`; `endpoint-binder`. */
  component?: string;
  /** `source.host` / `reportingInstance`, e.g. the pod name. */
  instance?: string;
  /** Pending events beyond this are dropped (counted); 256. */
  queueSize?: number;
  /** Repeats within this window bump the existing Event's count; 10 min like client-go. */
  aggregationWindowMs?: number;
  /** Aggregation keys remembered (LRU); 4096. */
  maxKeys?: number;
  /** Per-request deadline; 10 s. */
  requestTimeoutMs?: number;
  /**
   * Spam filter for Normal Events: a burst, then so many a second; beyond it they are dropped
   * (counted as `filtered`). Warnings are never filtered. Default: no limit.
   */
  normalRateLimit?: { burst: number; perSecond: number };
}

export type InvolvedObject = ObjectReference & { kind: string; name: string };

/** An ObjectReference for a cached object. */
export function objectRef(obj: KubeObject, kind?: string, apiVersion?: string): InvolvedObject {
  const k = obj.kind ?? kind;
  if (!k) throw new Error(`objectRef(${obj.metadata.name}): kind unknown`);
  const ref: InvolvedObject = { kind: k, name: obj.metadata.name };
  const av = obj.apiVersion ?? apiVersion;
  if (av) ref.apiVersion = av;
  if (obj.metadata.namespace) ref.namespace = obj.metadata.namespace;
  if (obj.metadata.uid) ref.uid = obj.metadata.uid;
  if (obj.metadata.resourceVersion) ref.resourceVersion = obj.metadata.resourceVersion;
  return ref;
}

interface Pending {
  input: EventInput;
  at: number;
}

/**
 * Records core/v1 Events without ever blocking or throwing: `record()` only enqueues into a
 * bounded queue that one background worker drains. Identical events (object, type, reason,
 * message) within the window PATCH the existing Event's count and lastTimestamp instead of
 * creating a new object, as client-go's EventCorrelator does.
 */
export class EventRecorder {
  private readonly client: KubeClient;
  private readonly log: Logger;
  private readonly m: KubeMetrics;
  private readonly clock: Clock;
  private readonly component: string;
  private readonly queue: Pending[] = [];
  private readonly cache: AggregationCache;
  private readonly queueSize: number;
  private readonly timeoutMs: number;
  private readonly normalBucket: TokenBucket | undefined;
  private filteredCount = 0;
  private worker: Promise<void> | undefined;
  private idleWaiters: (() => void)[] = [];
  private stopped = false;

  constructor(private readonly opts: EventRecorderOptions) {
    if (!opts.transport && !opts.kubeConfig) throw new Error('EventRecorder needs kubeConfig or transport');
    this.client = new KubeClient(opts.transport ?? new KubeTransport(opts.kubeConfig as KubeConfig));
    this.log = opts.logger.child({ component: 'event-recorder' });
    this.m = kubeMetrics(opts.metrics);
    this.clock = opts.clock ?? systemClock;
    this.component = opts.component ?? EVENT_COMPONENT;
    this.cache = new AggregationCache(opts.aggregationWindowMs ?? 600_000, opts.maxKeys ?? 4096);
    this.queueSize = opts.queueSize ?? 256;
    this.timeoutMs = opts.requestTimeoutMs ?? 10_000;
    const limit = opts.normalRateLimit;
    this.normalBucket = limit
      ? new TokenBucket(limit.burst, limit.perSecond, () => this.clock.now())
      : undefined;
  }

  normal(obj: InvolvedObject, reason: string, message: string): void {
    this.record(obj, 'Normal', reason, message);
  }

  warning(obj: InvolvedObject, reason: string, message: string): void {
    this.record(obj, 'Warning', reason, message);
  }

  /** Fire-and-forget. Never throws, never waits on the API. */
  record(obj: InvolvedObject, type: EventType, reason: string, message: string): void {
    if (this.stopped) {
      this.m.events.inc({ result: 'dropped' });
      return;
    }
    if (!isValidReason(reason) || (type !== 'Normal' && type !== 'Warning')) {
      this.m.events.inc({ result: 'invalid' });
      this.log.warn({ reason, type }, 'event rejected: reason must be CamelCase and type Normal or Warning');
      return;
    }
    if (type === 'Normal' && this.normalBucket && !this.normalBucket.take()) {
      this.filteredCount++;
      this.m.events.inc({ result: 'filtered' });
      return;
    }
    if (this.queue.length >= this.queueSize) {
      this.m.events.inc({ result: 'dropped' });
      this.log.debug({ reason, object: obj.name }, 'event dropped: queue full');
      return;
    }
    this.queue.push({
      input: { involvedObject: { ...obj }, type, reason, message: truncateMessage(message) },
      at: this.clock.now(),
    });
    this.worker ??= this.drain();
  }

  /** Normal Events dropped by the spam filter so far. */
  get filtered(): number {
    return this.filteredCount;
  }

  /** Pending events (for health/debug). */
  get pending(): number {
    return this.queue.length;
  }

  /** Resolves when the queue is empty and nothing is in flight (tests, shutdown). */
  flush(): Promise<void> {
    if (!this.worker) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Stops accepting events and waits (up to `timeoutMs`) for the queue to drain. */
  async stop(timeoutMs = 5_000): Promise<void> {
    this.stopped = true;
    const grace = new AbortController();
    await Promise.race([this.flush(), this.clock.sleep(timeoutMs, grace.signal)]);
    grace.abort();
    this.m.events.inc({ result: 'dropped' }, this.queue.length);
    this.queue.length = 0;
  }

  private async drain(): Promise<void> {
    try {
      for (let item = this.queue.shift(); item; item = this.queue.shift()) {
        try {
          await this.write(item);
        } catch (err) {
          this.m.events.inc({ result: 'failed' });
          this.log.warn(
            { reason: item.input.reason, object: item.input.involvedObject.name, ...describeError(err) },
            'event write failed',
          );
        }
      }
    } finally {
      this.worker = undefined;
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const w of waiters) w();
    }
  }

  private async write(item: Pending): Promise<void> {
    const { input } = item;
    const key = aggregationKey(input, this.component);
    const now = this.clock.now();
    const ts = eventTimestamp(now);
    const signal = AbortSignal.timeout(this.timeoutMs);
    const seen = this.cache.lookup(key, now);
    if (seen) {
      try {
        await this.client.mergePatch(
          kinds.event,
          seen.namespace,
          seen.name,
          { count: seen.count + 1, lastTimestamp: ts },
          { signal },
        );
        seen.count++;
        seen.lastSeenAt = now;
        this.m.events.inc({ result: 'aggregated' });
        return;
      } catch (err) {
        if (!isNotFound(err)) throw err;
        // The Event expired or was deleted: start a new one.
        this.cache.forget(key);
      }
    }
    const namespace = eventNamespace(input.involvedObject);
    const name = eventName(input.involvedObject.name, now, this.clock.random());
    await this.client.create(
      kinds.event,
      {
        metadata: { name, namespace },
        involvedObject: input.involvedObject,
        reason: input.reason,
        message: input.message,
        type: input.type,
        count: 1,
        firstTimestamp: ts,
        lastTimestamp: ts,
        source: { component: this.component, ...(this.opts.instance ? { host: this.opts.instance } : {}) },
        reportingComponent: this.component,
        reportingInstance: this.opts.instance ?? '',
      },
      { signal },
    );
    this.cache.remember(key, { namespace, name, count: 1, firstTimestamp: ts, lastSeenAt: now });
    this.m.events.inc({ result: 'created' });
  }
}
