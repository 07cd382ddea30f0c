import type { KubeConfig } from '@kubernetes/client-node';
import type { Registry } from 'prom-client';
import type { z } from 'zod';
import type { Logger } from '../../log/logger.js';
import { systemClock, type Clock } from '../../time/clock.js';
import { describeError, isGone, toKubeApiError } from '../errors.js';
import { kubeMetrics, type KubeMetrics } from '../metrics.js';
import { KubeObjectSchema, keyOf, type KubeObject } from '../objects.js';
import { KubeTransport } from '../transport.js';
import { Backoff, randomInRange, type BackoffOptions } from '../../time/backoff.js';
import { KUBE_CACHE_CURVE } from '../../time/curves.js';
import { listAll } from './list.js';
import { diffRelist, Store } from './store.js';
import { runWatch, type StreamEvent, type WatchEnd } from './watch-stream.js';

export interface CacheTuning {
  /** Server-side watch timeout, chosen at random in [min, max] seconds per watch; [300, 600]. */
  watchTimeoutSecondsRange: [number, number];
  /** Restart a watch that delivered no bytes (not even a bookmark) for this long; 150 s. */
  inactivityMs: number;
  /** Full relist as a safety net every this long (+0..25 % jitter); 30 min; 0 disables. */
  relistIntervalMs: number;
  /** Backoff for list/watch failures; 800 ms doubling to 30 s, 50 % jitter, reset after 2 min. */
  backoff: BackoffOptions;
  /** Delay before re-watching after a clean close; 250 ms (+ jitter). */
  rewatchDelayMs: number;
  /** A clean close with no events sooner than this counts as a failure (backs off); 1 s. */
  minWatchMs: number;
  /** `limit` for paged lists; 500. */
  pageSize: number;
}

export const defaultCacheTuning: CacheTuning = {
  watchTimeoutSecondsRange: [300, 600],
  inactivityMs: 150_000,
  relistIntervalMs: 30 * 60_000,
  backoff: KUBE_CACHE_CURVE,
  rewatchDelayMs: 250,
  minWatchMs: 1_000,
  pageSize: 500,
};

export interface CacheOptions<T extends KubeObject> {
  /** Either a kubeconfig (a transport is made from it) or a shared transport. */
  kubeConfig?: KubeConfig;
  transport?: KubeTransport;
  /** Collection path, e.g. `/api/v1/namespaces/ns/services` or `/api/v1/namespaces`. */
  path: string;
  /** Label for logs and metrics; defaults to `path`. */
  name?: string;
  labelSelector?: string;
  fieldSelector?: string;
  schema: z.ZodType<T>;
  logger: Logger;
  metrics?: Registry;
  clock?: Clock;
  options?: Partial<CacheTuning>;
}

export type CacheState = 'idle' | 'listing' | 'watching' | 'backoff' | 'stopped';

export interface CacheHealth {
  state: CacheState;
  synced: boolean;
  /** Last successful full list (ms since epoch). */
  lastListAt: number | undefined;
  /** Last successful list or any watch activity, bookmarks included. */
  lastSuccessAt: number | undefined;
  consecutiveFailures: number;
  lastError: string | undefined;
  resourceVersion: string;
  objects: number;
}

export interface CacheHandlers<T> {
  add: (obj: T) => void;
  update: (oldObj: T, newObj: T) => void;
  delete: (obj: T) => void;
}

export interface Cache<T extends KubeObject> {
  readonly name: string;
  /** Starts listing and watching (idempotent). Register handlers first to see the initial adds. */
  start(): void;
  /** Final: aborts the watch, cancels timers; the cache never restarts. */
  stop(): Promise<void>;
  /** True once the first full list has been applied. */
  readonly synced: boolean;
  /** Resolves once synced; rejects if `signal` aborts or the cache is stopped first. */
  waitForSync(signal?: AbortSignal): Promise<void>;
  get(namespace: string | undefined, name: string): T | undefined;
  list(): T[];
  /**
   * The resourceVersion the cache is current to (client-go's `LastSyncResourceVersion`): the
   * last list, watch event or bookmark. A write answered with a resourceVersion at or below it
   * is already reflected (or superseded) in the cache.
   */
  readonly lastSyncResourceVersion: string;
  health(): CacheHealth;
  /** Synchronous handlers; exceptions are caught and logged. Returns an unsubscribe function. */
  on<E extends keyof CacheHandlers<T>>(event: E, handler: CacheHandlers<T>[E]): () => void;
  /** Asks for a full relist soon (the current watch is restarted). */
  requestRelist(reason?: string): void;
}

export function createCache<T extends KubeObject>(opts: CacheOptions<T>): Cache<T> {
  return new Reflector(opts);
}

class Reflector<T extends KubeObject> implements Cache<T> {
  readonly name: string;
  private readonly store = new Store<T>();
  private readonly transport: KubeTransport;
  private readonly tuning: CacheTuning;
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly m: KubeMetrics;
  private readonly backoff: Backoff;
  private readonly handlers: { [E in keyof CacheHandlers<T>]: Set<CacheHandlers<T>[E]> } = {
    add: new Set(),
    update: new Set(),
    delete: new Set(),
  };
  private readonly stopCtl = new AbortController();
  private watchCtl: AbortController | undefined;
  private relistRequested: string | undefined;
  private started = false;
  private loopDone: Promise<void> = Promise.resolve();
  private syncWaiters = new Set<{ resolve: () => void; reject: (e: Error) => void }>();

  private state: CacheState = 'idle';
  private isSynced = false;
  private rv = '';
  private lastListAt: number | undefined;
  private lastSuccessAt: number | undefined;
  private consecutiveFailures = 0;
  private lastError: string | undefined;

  constructor(private readonly opts: CacheOptions<T>) {
    if (!opts.transport && !opts.kubeConfig) throw new Error('createCache needs kubeConfig or transport');
    this.name = opts.name ?? opts.path;
    this.transport = opts.transport ?? new KubeTransport(opts.kubeConfig as KubeConfig);
    this.tuning = { ...defaultCacheTuning, ...(opts.options ?? {}) };
    this.clock = opts.clock ?? systemClock;
    this.log = opts.logger.child({ cache: this.name });
    this.m = kubeMetrics(opts.metrics);
    this.backoff = new Backoff(this.tuning.backoff);
    this.m.synced.set({ cache: this.name }, 0);
  }

  get synced(): boolean {
    return this.isSynced;
  }

  start(): void {
    if (this.started || this.stopCtl.signal.aborted) return;
    this.started = true;
    this.loopDone = Promise.all([this.loop(), this.relistTimer()]).then(
      () => undefined,
      (err: unknown) => {
        // Not expected: every failure inside the loop is handled. Logged so it is never silent.
        this.log.error({ ...describeError(err) }, 'kube cache loop crashed');
      },
    );
  }

  async stop(): Promise<void> {
    if (!this.stopCtl.signal.aborted) {
      this.stopCtl.abort('stopped');
      this.watchCtl?.abort('stopped');
      this.state = 'stopped';
      const err = new Error(`cache ${this.name} stopped`);
      for (const w of this.syncWaiters) w.reject(err);
      this.syncWaiters.clear();
      this.log.info({}, 'kube cache stopped');
    }
    await this.loopDone;
  }

  waitForSync(signal?: AbortSignal): Promise<void> {
    if (this.isSynced) return Promise.resolve();
    if (this.stopCtl.signal.aborted) return Promise.reject(new Error(`cache ${this.name} stopped`));
    if (signal?.aborted) return Promise.reject(new Error('waitForSync aborted'));
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        this.syncWaiters.delete(waiter);
        reject(new Error('waitForSync aborted'));
      };
      const waiter = {
        resolve: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
        reject: (e: Error) => {
          signal?.removeEventListener('abort', onAbort);
          reject(e);
        },
      };
      this.syncWaiters.add(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  get(namespace: string | undefined, name: string): T | undefined {
    return this.store.get(namespace, name);
  }

  list(): T[] {
    return this.store.list();
  }

  get lastSyncResourceVersion(): string {
    return this.rv;
  }

  health(): CacheHealth {
    return {
      state: this.state,
      synced: this.isSynced,
      lastListAt: this.lastListAt,
      lastSuccessAt: this.lastSuccessAt,
      consecutiveFailures: this.consecutiveFailures,
      lastError: this.lastError,
      resourceVersion: this.rv,
      objects: this.store.size,
    };
  }

  on<E extends keyof CacheHandlers<T>>(event: E, handler: CacheHandlers<T>[E]): () => void {
    const set = this.handlers[event] as Set<CacheHandlers<T>[E]>;
    set.add(handler);
    return () => set.delete(handler);
  }

  requestRelist(reason = 'requested'): void {
    if (this.stopped) return;
    this.relistRequested = reason;
    this.watchCtl?.abort('relist');
  }

  // ---- internals ----

  private get stopped(): boolean {
    return this.stopCtl.signal.aborted;
  }

  private emit<E extends keyof CacheHandlers<T>>(event: E, ...args: Parameters<CacheHandlers<T>[E]>): void {
    for (const h of this.handlers[event]) {
      try {
        (h as (...a: Parameters<CacheHandlers<T>[E]>) => void)(...args);
      } catch (err) {
        this.m.handlerErrors.inc({ cache: this.name });
        this.log.error({ event, ...describeError(err) }, 'kube cache handler threw');
      }
    }
  }

  private markSuccess(): void {
    const now = this.clock.now();
    this.lastSuccessAt = now;
    this.m.lastEvent.set({ cache: this.name }, now / 1000);
  }

  private recordFailure(op: 'list' | 'watch', err: unknown): number {
    const d = describeError(err);
    this.consecutiveFailures++;
    this.lastError = `${op}: ${d.err}`;
    this.m.errors.inc({ cache: this.name, kind: d.errorKind });
    const api = toKubeApiError(err);
    const retryAfterMs = api?.retryAfterSeconds !== undefined ? api.retryAfterSeconds * 1000 : undefined;
    const delayMs = this.backoff.next(this.clock.now(), this.clock.random(), retryAfterMs);
    this.log.warn(
      { op, ...d, consecutiveFailures: this.consecutiveFailures, delayMs, retryAfterMs },
      op === 'list' ? 'kube cache list failed' : 'kube cache watch failed',
    );
    return delayMs;
  }

  private async pause(ms: number): Promise<void> {
    if (ms <= 0 || this.stopped) return;
    this.state = 'backoff';
    await this.clock.sleep(ms, this.stopCtl.signal);
  }

  private async loop(): Promise<void> {
    let needList = true;
    let listReason = 'initial';
    while (!this.stopped) {
      if (this.relistRequested) {
        listReason = this.relistRequested;
        this.relistRequested = undefined;
        needList = true;
      }
      if (needList) {
        this.state = 'listing';
        try {
          await this.relist(listReason);
          needList = false;
        } catch (err) {
          if (this.stopped) break;
          await this.pause(this.recordFailure('list', err));
          continue;
        }
      }
      if (this.stopped) break;
      this.state = 'watching';
      const ctl = new AbortController();
      this.watchCtl = ctl;
      const [lo, hi] = this.tuning.watchTimeoutSecondsRange;
      const timeoutSeconds = Math.round(randomInRange(lo, hi, this.clock.random()));
      const startedAt = this.clock.now();
      this.log.debug({ rv: this.rv, timeoutSeconds }, 'kube cache watch started');
      const end = await runWatch({
        transport: this.transport,
        path: this.opts.path,
        resourceVersion: this.rv,
        timeoutSeconds,
        labelSelector: this.opts.labelSelector,
        fieldSelector: this.opts.fieldSelector,
        inactivityMs: this.tuning.inactivityMs,
        clock: this.clock,
        signal: ctl.signal,
        onEvent: (ev) => this.onWatchEvent(ev),
        onActivity: () => this.markSuccess(),
        onMalformed: (line) => this.log.warn({ line: line.slice(0, 200) }, 'kube cache malformed watch line'),
      });
      this.watchCtl = undefined;
      if (this.stopped) break;
      const decision = this.afterWatch(end, this.clock.now() - startedAt);
      if (decision.relist) {
        needList = true;
        listReason = decision.relist;
      }
      await this.pause(decision.delayMs);
    }
    this.state = 'stopped';
  }

  /** Requests a relist every relistIntervalMs (+0..25 % jitter) until stopped. */
  private async relistTimer(): Promise<void> {
    const every = this.tuning.relistIntervalMs;
    if (every <= 0) return;
    while (!this.stopped) {
      await this.clock.sleep(Math.round(every * (1 + 0.25 * this.clock.random())), this.stopCtl.signal);
      if (this.stopped) return;
      this.requestRelist('periodic');
    }
  }

  /** What to do after a watch ended: relist or not, and how long to wait first. */
  private afterWatch(end: WatchEnd, durationMs: number): { relist?: string; delayMs: number } {
    if (end.events > 0) {
      this.backoff.reset();
      this.consecutiveFailures = 0;
    }
    const jittered = (ms: number): number => Math.round(ms * (1 + 0.5 * this.clock.random()));
    switch (end.kind) {
      case 'aborted':
        // Only a relist request aborts a live watch (stop() is checked before we get here);
        // the loop picks the request up.
        this.m.watchRestarts.inc({ cache: this.name, reason: 'relist' });
        return { delayMs: 0 };
      case 'closed':
        this.m.watchRestarts.inc({ cache: this.name, reason: 'closed' });
        if (end.events === 0 && durationMs < this.tuning.minWatchMs) {
          return { delayMs: this.recordFailure('watch', new Error('watch closed immediately')) };
        }
        this.log.debug({ events: end.events, durationMs }, 'kube cache watch closed');
        return { delayMs: jittered(this.tuning.rewatchDelayMs) };
      case 'inactive':
        this.m.watchRestarts.inc({ cache: this.name, reason: 'inactive' });
        this.m.errors.inc({ cache: this.name, kind: 'inactive' });
        this.consecutiveFailures++;
        this.lastError = `watch: no bytes for ${this.tuning.inactivityMs} ms`;
        this.log.warn(
          { inactivityMs: this.tuning.inactivityMs, events: end.events, rv: this.rv },
          'kube cache watch inactive, restarting',
        );
        return { delayMs: jittered(this.tuning.rewatchDelayMs) };
      case 'error':
        if (isGone(end.error)) {
          this.m.watchRestarts.inc({ cache: this.name, reason: 'gone' });
          this.m.errors.inc({ cache: this.name, kind: 'gone' });
          this.log.info({ rv: this.rv }, 'kube cache resource version gone, relisting');
          return { relist: 'gone', delayMs: 0 };
        }
        this.m.watchRestarts.inc({ cache: this.name, reason: 'error' });
        return { delayMs: this.recordFailure('watch', end.error) };
    }
  }

  private async relist(reason: string): Promise<void> {
    this.m.relists.inc({ cache: this.name, reason });
    const res = await listAll({
      transport: this.transport,
      path: this.opts.path,
      schema: this.opts.schema,
      labelSelector: this.opts.labelSelector,
      fieldSelector: this.opts.fieldSelector,
      pageSize: this.tuning.pageSize,
      signal: this.stopCtl.signal,
      onInvalid: (raw, error) => this.onInvalid(raw, error),
    });
    if (this.stopped) return;
    this.relistRequested = undefined;
    const diff = diffRelist(this.store.snapshot(), res.items);
    for (const old of diff.deletes) {
      this.store.remove(keyOf(old));
      this.emit('delete', old);
    }
    for (const obj of diff.adds) {
      this.store.upsert(obj);
      this.emit('add', obj);
    }
    for (const u of diff.updates) {
      this.store.upsert(u.new);
      this.emit('update', u.old, u.new);
    }
    this.rv = res.resourceVersion;
    this.lastListAt = this.clock.now();
    this.markSuccess();
    this.backoff.reset();
    this.consecutiveFailures = 0;
    this.lastError = undefined;
    this.m.objects.set({ cache: this.name }, this.store.size);
    this.log.info(
      {
        reason,
        rv: this.rv,
        objects: this.store.size,
        pages: res.pages,
        added: diff.adds.length,
        updated: diff.updates.length,
        deleted: diff.deletes.length,
      },
      'kube cache listed',
    );
    if (!this.isSynced) {
      this.isSynced = true;
      this.m.synced.set({ cache: this.name }, 1);
      for (const w of this.syncWaiters) w.resolve();
      this.syncWaiters.clear();
    }
  }

  private onInvalid(raw: unknown, error: z.ZodError): void {
    this.m.invalidObjects.inc({ cache: this.name });
    const meta = KubeObjectSchema.safeParse(raw);
    this.log.warn(
      {
        object: meta.success ? keyOf(meta.data) : undefined,
        issues: error.issues.slice(0, 5).map((i) => `${i.path.join('.')}: ${i.message}`),
      },
      'kube cache skipped invalid object',
    );
  }

  private onWatchEvent(ev: StreamEvent): void {
    const meta = KubeObjectSchema.safeParse(ev.object);
    const rv = meta.success ? meta.data.metadata.resourceVersion : undefined;
    if (ev.type === 'BOOKMARK') {
      if (rv) this.rv = rv;
      return;
    }
    const parsed = this.opts.schema.safeParse(ev.object);
    if (ev.type === 'DELETED') {
      if (meta.success) {
        const old = this.store.remove(keyOf(meta.data));
        const obj = parsed.success ? parsed.data : old;
        if (obj) this.emit('delete', obj);
      } else {
        this.onInvalid(ev.object, meta.error);
      }
    } else if (parsed.success) {
      const old = this.store.upsert(parsed.data);
      if (old) this.emit('update', old, parsed.data);
      else this.emit('add', parsed.data);
    } else {
      this.onInvalid(ev.object, parsed.error);
    }
    if (rv) this.rv = rv;
    this.m.objects.set({ cache: this.name }, this.store.size);
  }
}
