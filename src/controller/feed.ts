import type { ManagementClient } from '../api/client/index.js';
import { ApiError } from '../api/client/index.js';
import { reconnectDelayMs } from '../api/client/sse/watch.js';
import type { Endpoint } from '../api/schemas/endpoint.js';
import type { OperatorEvent } from '../api/schemas/operator.js';
import type { EndpointRecord } from '../binding/types.js';
import { sleep } from '../time/clock.js';
import type { Logger } from '../log/logger.js';
import type { ControllerMetrics } from './metrics.js';

export interface FeedOptions {
  client: ManagementClient;
  operatorId: () => string;
  log: Logger;
  metrics: ControllerMetrics;
  /** A periodic full relist, besides the ones `resync` asks for. */
  resyncIntervalMs: number;
  /** Called after every change to the endpoint set (coalesce on the other side). */
  onChange: () => void;
  /** The stream answered 404: the registration is gone; the callback re-registers. */
  onRegistrationLost: () => Promise<void>;
  /** Poll backoff while the stream is down; defaults 1 s doubling to 60 s. */
  poll?: { baseDelayMs: number; maxDelayMs: number };
  now?: () => number;
  /** false: no notification stream; the account is polled at the poll interval (benchmarks). */
  notifications?: boolean;
}

export function toRecord(ep: Endpoint): EndpointRecord {
  return {
    id: ep.id,
    url: ep.url,
    description: ep.description,
    metadata: ep.metadata,
    created_at: ep.created_at,
  };
}

interface Held {
  record: EndpointRecord;
  updatedAt: string;
}

/**
 * The account's cluster-bound endpoints as this controller knows them: notifications applied
 * as they arrive, complete listings on `ready`, on `resync`, periodically, and by polling while
 * the stream is down. Only a complete, successful listing removes an endpoint that no
 * `endpoint.deleted` removed; a failed or half-read listing changes nothing.
 */
export class EndpointFeed {
  private readonly held = new Map<string, Held>();
  private completeListing = false;
  private lastFullSyncAt: number | undefined;
  private streamLive = false;
  /** Changes seen while a listing runs; re-applied over its result, so nothing newer is lost. */
  private duringList: OperatorEvent[] | undefined;
  private listing: Promise<boolean> | undefined;
  private wake: (() => void) | undefined;
  private readonly now: () => number;

  constructor(private readonly opts: FeedOptions) {
    this.now = opts.now ?? Date.now;
  }

  /** Every endpoint held, in no particular order. */
  endpoints(): EndpointRecord[] {
    return [...this.held.values()].map((h) => h.record);
  }

  get size(): number {
    return this.held.size;
  }

  /** True once a complete listing has been applied: from then on, absence means deletion. */
  get complete(): boolean {
    return this.completeListing;
  }

  get lastFullSync(): number | undefined {
    return this.lastFullSyncAt;
  }

  get live(): boolean {
    return this.streamLive;
  }

  /** Runs the stream, the periodic resync and the poller until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    await Promise.all([
      this.opts.notifications === false ? undefined : this.streamLoop(signal),
      this.timerLoop(signal),
    ]);
  }

  /** A complete listing now; resolves true when it succeeded (concurrent callers share one). */
  relist(reason: string, signal?: AbortSignal): Promise<boolean> {
    if (!this.listing) {
      this.listing = this.listOnce(reason, signal).finally(() => {
        this.listing = undefined;
      });
    }
    return this.listing;
  }

  private async listOnce(reason: string, signal?: AbortSignal): Promise<boolean> {
    const started = this.now();
    this.duringList = [];
    const listed = new Map<string, Held>();
    try {
      for await (const ep of this.opts.client.kubernetesOperators.boundEndpoints(this.opts.operatorId(), {
        ...(signal ? { signal } : {}),
      })) {
        listed.set(ep.id, { record: toRecord(ep), updatedAt: ep.updated_at });
      }
    } catch (err) {
      this.duringList = undefined;
      this.opts.metrics.apiCalls.inc({ call: 'list_bound_endpoints', result: 'error' });
      if (!signal?.aborted) {
        this.opts.log.warn(
          { reason, error: err instanceof Error ? err.message : String(err), held: this.held.size },
          'endpoint listing failed; nothing removed',
        );
      }
      if (err instanceof ApiError && err.status === 404) await this.opts.onRegistrationLost();
      return false;
    }
    this.opts.metrics.apiCalls.inc({ call: 'list_bound_endpoints', result: 'ok' });
    const replay = this.duringList;
    this.duringList = undefined;
    let removed = 0;
    let changed = !this.completeListing || listed.size !== this.held.size || replay.length > 0;
    for (const [id, h] of this.held) {
      const now = listed.get(id);
      if (!now) removed++;
      if (!now || now.updatedAt !== h.updatedAt || now.record.url !== h.record.url) changed = true;
    }
    this.held.clear();
    for (const [id, h] of listed) this.held.set(id, h);
    for (const ev of replay) this.applyEvent(ev);
    this.completeListing = true;
    this.lastFullSyncAt = this.now();
    this.opts.metrics.lastFullSync.set(this.lastFullSyncAt / 1000);
    this.opts.log.info(
      { reason, endpoints: this.held.size, removed, changed, ms: this.now() - started },
      'endpoint listing complete',
    );
    // An unchanged account needs no pass: the plan is a function of the endpoints and the
    // cluster, and cluster changes trigger passes of their own.
    if (changed) this.opts.onChange();
    return true;
  }

  /** Applies one notification; newer `updated_at` wins so a replay never rolls an endpoint back. */
  private applyEvent(ev: OperatorEvent): boolean {
    switch (ev.type) {
      case 'endpoint.created':
      case 'endpoint.updated': {
        const cur = this.held.get(ev.endpoint.id);
        if (cur && cur.updatedAt > ev.endpoint.updated_at) return false;
        this.held.set(ev.endpoint.id, { record: toRecord(ev.endpoint), updatedAt: ev.endpoint.updated_at });
        return true;
      }
      case 'endpoint.deleted':
        return this.held.delete(ev.endpoint.id);
      default:
        return false;
    }
  }

  private onEvent(ev: OperatorEvent, signal: AbortSignal): void {
    const m = this.opts.metrics;
    switch (ev.type) {
      case 'ready':
        m.notifications.inc({ type: 'ready' });
        if (!this.streamLive) {
          this.streamLive = true;
          this.opts.log.info({ eventId: ev.id }, 'endpoint notifications live');
        }
        if (!this.completeListing) void this.relist('initial', signal);
        return;
      case 'resync':
        m.notifications.inc({ type: 'resync' });
        this.opts.log.info({ reason: ev.reason }, 'endpoint notifications asked for a resync');
        void this.relist(`resync:${ev.reason}`, signal);
        return;
      default: {
        m.notifications.inc({ type: ev.type });
        if (ev.type !== 'endpoint.deleted') {
          const lag = (this.now() - Date.parse(ev.endpoint.updated_at)) / 1000;
          if (Number.isFinite(lag)) m.notificationLag.observe(Math.max(0, lag));
        }
        this.duringList?.push(ev);
        const changed = this.applyEvent(ev);
        this.opts.log.debug({ type: ev.type, endpointId: ev.endpoint.id, changed }, 'endpoint notification');
        if (changed) this.opts.onChange();
      }
    }
  }

  private async streamLoop(signal: AbortSignal): Promise<void> {
    let attempt = 0;
    while (!signal.aborted) {
      try {
        const events = this.opts.client.kubernetesOperators.watchEvents(this.opts.operatorId(), {
          signal,
          onReconnect: ({ error }) => {
            this.opts.metrics.apiCalls.inc({ call: 'watch_events', result: 'error' });
            if (this.streamLive) {
              this.opts.log.warn(
                { error: error instanceof Error ? error.message : undefined },
                'endpoint notifications dropped; polling until they return',
              );
            }
            this.streamLive = false;
            this.wake?.();
          },
        });
        for await (const ev of events) {
          attempt = 0;
          this.onEvent(ev, signal);
        }
      } catch (err) {
        if (signal.aborted) return;
        this.opts.metrics.apiCalls.inc({ call: 'watch_events', result: 'error' });
        this.streamLive = false;
        this.wake?.();
        attempt++;
        this.opts.log.warn(
          { error: err instanceof Error ? err.message : String(err), attempt },
          'endpoint notification stream refused',
        );
        if (err instanceof ApiError && err.status === 404) await this.opts.onRegistrationLost();
        await sleep(reconnectDelayMs({ baseDelayMs: 1_000, maxDelayMs: 60_000 }, attempt), signal);
      }
    }
  }

  /** Periodic resync while the stream is live; backoff polling while it is not. */
  private async timerLoop(signal: AbortSignal): Promise<void> {
    const poll = this.opts.poll ?? { baseDelayMs: 1_000, maxDelayMs: 60_000 };
    let failures = 0;
    while (!signal.aborted) {
      const delay = this.streamLive
        ? this.opts.resyncIntervalMs
        : reconnectDelayMs(poll, Math.max(1, failures + 1));
      await new Promise<void>((resolve) => {
        const t = setTimeout(done, delay);
        function done(): void {
          clearTimeout(t);
          signal.removeEventListener('abort', done);
          resolve();
        }
        this.wake = this.streamLive ? done : undefined;
        signal.addEventListener('abort', done, { once: true });
      });
      this.wake = undefined;
      if (signal.aborted) return;
      const ok = await this.relist(this.streamLive ? 'periodic' : 'poll', signal);
      failures = ok ? 0 : failures + 1;
    }
  }
}
