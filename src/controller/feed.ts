import type { ManagementClient } from '../api/client/index.js';
import { ApiError } from '../api/client/index.js';
import type { Endpoint } from '../api/schemas/endpoint.js';
import type { OperatorEvent } from '../api/schemas/operator.js';
import type { ListingFacts } from '../binding/delete-guard.js';
import type { EndpointRecord } from '../binding/types.js';
import { Backoff } from '../time/backoff.js';
import {
  DELETION_PROOF_CURVE,
  FEED_POLL_CURVE,
  FEED_STREAM_CURVE,
  withBounds,
  type CurveBounds,
} from '../time/curves.js';
import { systemClock, type Clock } from '../time/clock.js';
import type { Logger } from '../log/logger.js';
import type { ControllerMetrics } from './metrics.js';
import type { RegistrationHandle } from './registration.js';

export interface FeedOptions {
  client: ManagementClient;
  /** Whose endpoints to list and watch; told when the API says the record is gone. */
  registration: RegistrationHandle;
  log: Logger;
  metrics: ControllerMetrics;
  /** A periodic full relist, besides the ones `resync` asks for. */
  resyncIntervalMs: number;
  /** Called after every change to the endpoint set (the work queue's `add`; it coalesces). */
  onChange: () => void;
  /** Called after a complete listing that changed nothing (it may still release held deletes). */
  onUnchangedListing?: () => void;
  /** Poll backoff's first and longest delay while the stream is down (default FEED_POLL_CURVE's 1 s and 60 s). */
  poll?: CurveBounds;
  clock?: Clock;
  /** false: no notification stream; the account is polled at the poll interval (benchmarks). */
  notifications?: boolean;
  /** Proofs of absence (`GET /endpoints/{id}`) in flight at once (default 8). */
  proofConcurrency?: number;
}

/** An endpoint whose absence something suggested, waiting for its proof (docs/controller.md "Deletion"). */
export interface DeletionCandidate {
  id: string;
  /** What nominated it: a listing that lacked it, an `endpoint.deleted`, a Service naming an unknown id. */
  reason: string;
  since: number;
  /** Why the last proof attempt proved nothing (a 5xx, a timeout, a bare 404, an HTML page). */
  lastError?: string;
}

/**
 * The endpoint set as one plain value: what the pass projects, and what the next passes need to
 * judge it (a complete listing or not, when, under which registration).
 */
export interface FeedSnapshot {
  endpoints: readonly EndpointRecord[];
  /** A complete listing has been applied: from then on, absence means deletion. */
  complete: boolean;
  /** When the last complete listing finished (ms since the epoch). */
  lastFullSyncAt: number | undefined;
  /** The registration the endpoints were learned under (its operator id, and which one it is). */
  registration: { operatorId: string | undefined; generation: number };
  /** The last complete listing (when, under which registration generation), for the delete rules. */
  listing: ListingFacts | undefined;
  /** The notification stream is connected (it resumes without a gap, or asks for a resync). */
  streamLive: boolean;
  /** Endpoints nominated for deletion and not proven gone (each stays held meanwhile). */
  deletionsPending: number;
  /** Those candidates, with why they were nominated and why they are not proven yet. */
  candidates: readonly DeletionCandidate[];
  /**
   * Ids proven gone by the API's own not-found answer: the only endpoint absences a delete may
   * follow from.
   */
  provenGone: ReadonlySet<string>;
  takenAt: number;
}

/** Ids proven gone are remembered this many at most (oldest forgotten first; ids are never reused). */
const PROVEN_GONE_MAX = 100_000;

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

interface Candidate extends DeletionCandidate {
  backoff: Backoff;
  nextAt: number;
  inFlight: boolean;
}

/**
 * The account's cluster-bound endpoints as this controller knows them: notifications applied
 * as they arrive, complete listings on `ready`, on `resync`, periodically, and by polling while
 * the stream is down. Nothing removes an endpoint but a proof for that endpoint: a listing that
 * lacks it or an `endpoint.deleted` only nominates it, and `GET /endpoints/{id}` answering the
 * API's own not-found error removes it (docs/controller.md "Deletion").
 */
export class EndpointFeed {
  private readonly held = new Map<string, Held>();
  private completeListing = false;
  private lastFullSyncAt: number | undefined;
  private listedSoFar: number | undefined;
  private streamLive = false;
  /** Changes seen while a listing runs; re-applied over its result, so nothing newer is lost. */
  private duringList: OperatorEvent[] | undefined;
  private listing: Promise<boolean> | undefined;
  /** Aborted to cut the timer loop's wait short (the stream dropped: start polling now). */
  private wake: AbortController | undefined;
  private readonly clock: Clock;
  private lastListing: ListingFacts | undefined;
  private listings = 0;
  private readonly candidates = new Map<string, Candidate>();
  /** Ids proven gone, in the order proven. */
  private readonly gone = new Set<string>();
  private proving = 0;
  private proofTimer: AbortController | undefined;
  private runSignal: AbortSignal | undefined;

  constructor(private readonly opts: FeedOptions) {
    this.clock = opts.clock ?? systemClock;
  }

  private now(): number {
    return this.clock.now();
  }

  /** Every endpoint held, in no particular order. */
  endpoints(): EndpointRecord[] {
    return [...this.held.values()].map((h) => h.record);
  }

  snapshot(): FeedSnapshot {
    let operatorId: string | undefined;
    try {
      operatorId = this.opts.registration.operatorId();
    } catch {
      operatorId = undefined;
    }
    return {
      endpoints: this.endpoints(),
      complete: this.completeListing,
      lastFullSyncAt: this.lastFullSyncAt,
      registration: { operatorId, generation: this.opts.registration.generation },
      listing: this.lastListing ? { ...this.lastListing } : undefined,
      streamLive: this.streamLive,
      deletionsPending: this.candidates.size,
      candidates: this.deletionCandidates(),
      // A live view, not a copy (up to 100,000 ids; it only grows between snapshots, and every id
      // in it is proven).
      provenGone: this.gone,
      takenAt: this.now(),
    };
  }

  /** The endpoints nominated for deletion and not proven gone (each still held). */
  deletionCandidates(): DeletionCandidate[] {
    return [...this.candidates.values()].map((c) => ({
      id: c.id,
      reason: c.reason,
      since: c.since,
      ...(c.lastError !== undefined ? { lastError: c.lastError } : {}),
    }));
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

  /**
   * Endpoints read so far by the listing under way, or undefined when none runs. The API pages
   * carry no total, so this is all `status` can say of a first sync's progress.
   */
  get listingProgress(): number | undefined {
    return this.listedSoFar;
  }

  get live(): boolean {
    return this.streamLive;
  }

  /** Runs the stream, the periodic resync and the poller until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    this.runSignal = signal;
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

  /**
   * A complete listing that starts now: one already running started too early (before a
   * leadership term, say), so it is waited out and another one made.
   */
  async relistFresh(reason: string, signal?: AbortSignal): Promise<boolean> {
    const running = this.listing;
    if (running) await running.catch(() => false);
    return this.relist(reason, signal);
  }

  /**
   * `relistFresh` until one succeeds, with the poll backoff between failures, while `wanted()`
   * holds: a listing the deletion rules wait for must not be given up after one failed try.
   */
  async relistFreshUntilDone(reason: string, signal: AbortSignal, wanted: () => boolean): Promise<boolean> {
    const backoff = new Backoff(withBounds(FEED_POLL_CURVE, this.opts.poll));
    while (!signal.aborted && wanted()) {
      if (await this.relistFresh(reason, signal)) return true;
      await this.clock.sleep(backoff.next(this.now(), this.clock.random()), signal);
    }
    return false;
  }

  private async listOnce(reason: string, signal?: AbortSignal): Promise<boolean> {
    const started = this.now();
    const generation = this.opts.registration.generation;
    this.duringList = [];
    const listed = new Map<string, Held>();
    this.listedSoFar = 0;
    try {
      for await (const ep of this.opts.client.kubernetesOperators.boundEndpoints(
        this.opts.registration.operatorId(),
        {
          ...(signal ? { signal } : {}),
        },
      )) {
        listed.set(ep.id, { record: toRecord(ep), updatedAt: ep.updated_at });
        this.listedSoFar = listed.size;
      }
    } catch (err) {
      this.listedSoFar = undefined;
      this.duringList = undefined;
      this.opts.metrics.apiCalls.inc({ call: 'list_bound_endpoints', result: 'error' });
      if (!signal?.aborted) {
        this.opts.log.warn(
          { reason, error: err instanceof Error ? err.message : String(err), held: this.held.size },
          'endpoint listing failed; nothing removed',
        );
      }
      if (err instanceof ApiError && err.status === 404) await this.opts.registration.lost();
      return false;
    }
    this.opts.metrics.apiCalls.inc({ call: 'list_bound_endpoints', result: 'ok' });
    this.listedSoFar = undefined;
    const replay = this.duringList;
    this.duringList = undefined;
    let lacking = 0;
    let changed = !this.completeListing || replay.length > 0;
    for (const [id, h] of this.held) {
      const now = listed.get(id);
      // Absent from a listing is a suspicion, not a proof: the endpoint stays until its own
      // GET answers not-found (a truncated or wrong listing removes nothing).
      if (!now) {
        lacking++;
        this.nominate(id, `absent from the complete listing #${this.listings + 1}`);
      } else if (now.updatedAt > h.updatedAt || now.record.url !== h.record.url) changed = true;
    }
    for (const [id, h] of listed) {
      // A listing that started before a deletion was proven must not bring the endpoint back.
      if (this.gone.has(id)) continue;
      // One that started after a nomination shows the endpoint exists: its proof is not needed.
      const candidate = this.candidates.get(id);
      if (candidate && !candidate.inFlight && candidate.since < started) this.candidates.delete(id);
      const cur = this.held.get(id);
      if (!cur) changed = true;
      if (!cur || cur.updatedAt <= h.updatedAt) this.held.set(id, h);
    }
    for (const ev of replay) this.applyEvent(ev);
    this.completeListing = true;
    this.lastFullSyncAt = this.now();
    this.lastListing = {
      seq: ++this.listings,
      startedAt: started,
      finishedAt: this.lastFullSyncAt,
      generation,
    };
    this.opts.metrics.lastFullSync.set(this.lastFullSyncAt / 1000);
    this.opts.log.info(
      { reason, endpoints: this.held.size, lacking, changed, ms: this.now() - started },
      'endpoint listing complete',
    );
    // An unchanged account needs no pass: the plan is a function of the endpoints and the
    // cluster, and cluster changes trigger passes of their own.
    if (changed) this.opts.onChange();
    else this.opts.onUnchangedListing?.();
    return true;
  }

  /** Applies one notification; newer `updated_at` wins so a replay never rolls an endpoint back. */
  private applyEvent(ev: OperatorEvent): boolean {
    switch (ev.type) {
      case 'endpoint.created':
      case 'endpoint.updated': {
        // Ids are never reused: a late notification of a proven-gone endpoint is history.
        if (this.gone.has(ev.endpoint.id)) return false;
        const cur = this.held.get(ev.endpoint.id);
        if (cur && cur.updatedAt > ev.endpoint.updated_at) return false;
        this.held.set(ev.endpoint.id, { record: toRecord(ev.endpoint), updatedAt: ev.endpoint.updated_at });
        this.candidates.delete(ev.endpoint.id);
        return true;
      }
      case 'endpoint.deleted': {
        // One notification is not proof (a false one would remove a live projection): it
        // nominates the endpoint, and its own GET decides, at once.
        if (this.held.has(ev.endpoint.id)) this.nominate(ev.endpoint.id, 'endpoint.deleted notification');
        return false;
      }
      default:
        return false;
    }
  }

  /**
   * Asks for the proof that `id` is gone (a listing lacked it, a notification said so, or a
   * Service of ours names an id this replica does not hold). Idempotent; proofs run in the
   * background with bounded concurrency and backoff, and their outcome reaches `onChange`.
   */
  nominate(id: string, reason: string): void {
    if (this.gone.has(id) || this.candidates.has(id)) return;
    this.candidates.set(id, {
      id,
      reason,
      since: this.now(),
      backoff: new Backoff(DELETION_PROOF_CURVE),
      nextAt: this.now(),
      inFlight: false,
    });
    this.opts.log.info({ endpointId: id, reason }, 'endpoint deletion candidate; proving');
    this.proveDue();
  }

  private proveDue(): void {
    const signal = this.runSignal;
    if (signal?.aborted) return;
    const limit = this.opts.proofConcurrency ?? 8;
    const now = this.now();
    let next = Number.POSITIVE_INFINITY;
    for (const c of this.candidates.values()) {
      if (c.inFlight) continue;
      if (c.nextAt > now) {
        next = Math.min(next, c.nextAt);
        continue;
      }
      if (this.proving >= limit) return;
      this.proving++;
      c.inFlight = true;
      void this.prove(c, signal).finally(() => {
        this.proving--;
        c.inFlight = false;
        this.proveDue();
      });
    }
    if (next === Number.POSITIVE_INFINITY) return;
    this.proofTimer?.abort();
    const timer = new AbortController();
    this.proofTimer = timer;
    const wait = signal ? AbortSignal.any([signal, timer.signal]) : timer.signal;
    void this.clock.sleep(Math.max(0, next - now), wait).then(() => {
      if (!wait.aborted) this.proveDue();
    });
  }

  /** One proof: not-found removes the endpoint, found keeps (and refreshes) it, anything else retries. */
  private async prove(c: Candidate, signal: AbortSignal | undefined): Promise<void> {
    const m = this.opts.metrics;
    let outcome: Awaited<ReturnType<ManagementClient['endpoints']['lookup']>>;
    try {
      outcome = await this.opts.client.endpoints.lookup(c.id, signal ? { signal } : {});
    } catch (err) {
      if (signal?.aborted) return;
      m.apiCalls.inc({ call: 'get_endpoint', result: 'error' });
      c.lastError = err instanceof Error ? err.message : String(err);
      c.nextAt = this.now() + c.backoff.next(this.now(), this.clock.random());
      this.opts.log.warn(
        { endpointId: c.id, error: c.lastError, retryInMs: c.nextAt - this.now() },
        'endpoint deletion not proven; kept',
      );
      return;
    }
    m.apiCalls.inc({ call: 'get_endpoint', result: 'ok' });
    if (this.candidates.get(c.id) !== c) return;
    this.candidates.delete(c.id);
    if (outcome.found && outcome.endpoint.bindings.includes('kubernetes')) {
      const ep = outcome.endpoint;
      const cur = this.held.get(ep.id);
      this.opts.log.info(
        { endpointId: c.id, reason: c.reason },
        'endpoint exists; deletion candidate dropped',
      );
      if (!cur || cur.updatedAt < ep.updated_at) {
        this.held.set(ep.id, { record: toRecord(ep), updatedAt: ep.updated_at });
        this.opts.onChange();
      }
      return;
    }
    this.gone.add(c.id);
    if (this.gone.size > PROVEN_GONE_MAX) this.gone.delete(this.gone.values().next().value!);
    this.held.delete(c.id);
    this.opts.log.info(
      {
        endpointId: c.id,
        reason: c.reason,
        proof: outcome.found ? 'no kubernetes binding' : outcome.errorCode,
        operationId: outcome.found ? null : (outcome.operationId ?? null),
      },
      'endpoint deletion proven',
    );
    this.opts.onChange();
  }

  private onEvent(ev: OperatorEvent, signal: AbortSignal): void {
    const m = this.opts.metrics;
    switch (ev.type) {
      case 'ready':
        m.notifications.inc({ type: 'ready' });
        if (!this.streamLive) {
          this.streamLive = true;
          this.opts.log.info({ eventId: ev.id }, 'endpoint notifications live');
          // A poll wait begun while the stream was down gives way to the resync interval.
          this.wake?.abort();
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
    const backoff = new Backoff(FEED_STREAM_CURVE);
    while (!signal.aborted) {
      try {
        const events = this.opts.client.kubernetesOperators.watchEvents(this.opts.registration.operatorId(), {
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
            this.wake?.abort();
          },
        });
        for await (const ev of events) {
          backoff.reset();
          this.onEvent(ev, signal);
        }
      } catch (err) {
        if (signal.aborted) return;
        this.opts.metrics.apiCalls.inc({ call: 'watch_events', result: 'error' });
        this.streamLive = false;
        this.wake?.abort();
        const delayMs = backoff.next(this.now(), this.clock.random());
        this.opts.log.warn(
          { error: err instanceof Error ? err.message : String(err), attempt: backoff.attempt, delayMs },
          'endpoint notification stream refused',
        );
        if (err instanceof ApiError && err.status === 404) await this.opts.registration.lost();
        await this.clock.sleep(delayMs, signal);
      }
    }
  }

  /** Periodic resync while the stream is live; backoff polling while it is not. */
  private async timerLoop(signal: AbortSignal): Promise<void> {
    const backoff = new Backoff(withBounds(FEED_POLL_CURVE, this.opts.poll));
    while (!signal.aborted) {
      const live = this.streamLive;
      const delay = live ? this.opts.resyncIntervalMs : backoff.next(this.now(), this.clock.random());
      // The wait ends early when the stream changes: a drop starts polling at once, a stream
      // that comes back live replaces the poll with the resync interval (no listing for it:
      // the stream resumes without a gap or asks for a resync itself).
      const wake = new AbortController();
      this.wake = wake;
      await this.clock.sleep(delay, AbortSignal.any([signal, wake.signal]));
      this.wake = undefined;
      if (signal.aborted) return;
      if (!live && this.streamLive) continue;
      const ok = await this.relist(this.streamLive ? 'periodic' : 'poll', signal);
      if (ok) backoff.reset();
    }
  }
}
