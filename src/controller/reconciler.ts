import {
  beyondRecordCapacity,
  isOwnedBy,
  lostLabelDetail,
  MAX_RECORDED_INTERNAL_SERVICES,
  proveOwnership,
  ROLE_INTERNAL,
  ROLE_LABEL,
  unprovenReason,
  withCreatedAliases,
  type InternalServicesChange,
  type LeftBehindAlias,
} from '../binding/ownership/index.js';
import { provenDeletes, staleKnowledge, type DeleteSafety } from '../binding/delete-guard.js';
import { namespaceNameVerdict, namespaceVerdict } from '../binding/namespace-policy.js';
import { parseEndpointUrl } from '../binding/endpoint-url.js';
import { ENDPOINT_URL_ANNOTATION } from '../binding/identity.js';
import { deletingReason, isDeleting, plan } from '../binding/plan.js';
import { nextReservations, reservedPorts, type Reservation } from '../binding/port-reservations.js';
import { projectInChunks } from '../binding/project.js';
import type { EndpointSelector } from '../binding/selector.js';
import { InternalRecordBook } from './internal-record-book.js';
import { createsInPairs } from '../binding/create-order.js';
import { LeftBehindAliases } from './left-behind-aliases.js';
import { EventPacer } from './event-pacer.js';
import { NameLookup, freedWithinGrace, splitKey } from './decide/name-lookup.js';
import { recordPassMetrics } from './pass-metrics.js';
import { ReportedOnce } from './decide/reported-once.js';
import { yieldToEventLoop } from '../time/yield.js';
import { servedEndpointIds } from '../binding/service-format.js';
import type {
  DesiredState,
  EndpointStatus,
  PlanAction,
  ProjectionConfig,
  ProjectionState,
} from '../binding/types.js';
import { keyOf, objectRef, type EventRecorder, type InvolvedObject, type Service } from '../kube/index.js';
import type { Logger } from '../log/logger.js';
import { systemClock, type Clock } from '../time/clock.js';
import { withProgress } from '../time/progress.js';
import { applyAll, type ApplyOutcome, type ServiceApi } from './apply.js';
import type { ClusterSnapshot, ClusterState, NameRecord } from './cluster.js';
import type { FeedSnapshot } from './feed.js';
import type { ControllerMetrics } from './metrics.js';
import { PASS, parseItem, readItem, retryItem, type ControllerQueue, type WorkItem } from './queue.js';
import {
  asWritten,
  recordOf,
  stateChanges,
  unreportedOnly,
  withRecordFull,
  withWriteErrors,
  writeEvent,
  writeVerb,
  type EventDecision,
} from './decide/reporting.js';

/** A Service whose last write failed: its endpoints show `error` until a write succeeds. */
export interface WriteFailure {
  message: string;
  /** Waiting out its backoff: the pass leaves its write for later. */
  resting: boolean;
}

/**
 * Everything one pass reads, as one plain value, taken before the pure step: the endpoint set,
 * the cluster (caches, pending writes, names held by others), failed writes, and leadership.
 */
export interface PassSnapshot {
  takenAt: number;
  feed: FeedSnapshot;
  cluster: ClusterSnapshot;
  failures: ReadonlyMap<string, WriteFailure>;
  leader: boolean;
  /** When the current leadership term began; undefined while not leading. */
  termStartedAt: number | undefined;
}

export interface ReconcilerOptions {
  feed: {
    snapshot(): FeedSnapshot;
    /** Asks for the proof that an endpoint is gone (a Service of ours names an id not held). */
    nominate(id: string, reason: string): void;
  };
  cluster: ClusterState;
  queue: ControllerQueue;
  /** Writes, and reads of single names. */
  api: ServiceApi;
  /** Every Service of a namespace (reading many names at once). */
  listServices: (namespace: string, signal: AbortSignal) => Promise<Service[]>;
  selector: EndpointSelector;
  /** The projection settings; read on every pass. */
  config: () => ProjectionConfig;
  isLeader: () => boolean;
  /** When this replica's current leadership term began (undefined while not leading). */
  termStartedAt: () => number | undefined;
  /** The delete rules' settings; read on every pass. */
  deleteSafety: () => DeleteSafety;
  /** How long a removed URL keeps its forwarder port (0: not at all). */
  portReservationMs?: number;
  writeConcurrency: number;
  log: Logger;
  metrics: ControllerMetrics;
  recorder?: EventRecorder;
  /** Where events about endpoints without a Service of their own go (the controller's Pod). */
  podRef?: InvolvedObject;
  clock?: Clock;
  /**
   * An alias name a foreign Service held is taken only after it has been seen free this long
   * (default 0: at once).
   */
  foreignNameGraceMs?: number;
  /**
   * The Events already in the operator namespace, as `eventKey(reason, message)`: read once,
   * before this process's first state report as leader, so a restart re-sends none of them.
   */
  reportedEvents?: (signal: AbortSignal) => Promise<ReadonlySet<string>>;
  /** How many internal Services the install record lists at most (default MAX_RECORDED_INTERNAL_SERVICES; tests lower it). */
  recordCapacity?: number;
  /** Write-ahead entries per record write, and so creates per pass (default 4,000; tests lower it). */
  intentsPerPass?: number;
  /** Called once, when the first pass over a complete listing is done. */
  onCaughtUp?: () => void;
  /**
   * Where the leader records the internal Services it created (the install-record writer); the
   * list is read back through the cluster's watch of the record. Without it nothing is recorded.
   */
  internalRecord?: {
    recordInternalServices(change: InternalServicesChange): void;
    /** Writes the pass's write-ahead entries before its creates; false: not written (creates wait). */
    writeAhead(intents: readonly string[], signal: AbortSignal): Promise<boolean>;
  };
}

/** Write-ahead entries per record write (and so creates per pass). */
const MAX_INTENTS_PER_PASS = 4_000;

/** More unknown names than this in one namespace are read with one list instead of one GET each. */
const SCAN_THRESHOLD = 8;

/**
 * The reconcile pass, as external-dns's `RunOnce`: read (one snapshot) → `project()` → read the
 * names nobody has read → `plan()` → apply (leader only) → record outcomes → report. It runs on
 * the work queue's workers, which also recheck names held by others; it never sleeps or computes
 * a delay (the queue's rate limiter does), and it is the only writer of what the read model learns.
 */
export class Reconciler {
  private readonly clock: Clock;
  private readonly failures = new Map<string, WriteFailure>();
  /** What this process last wrote at each key (to tell `Repaired` from `Updated`). */
  private readonly lastWritten = new Map<string, Service>();
  private previousStates = new Map<string, ProjectionState>();
  private portHints = new Map<string, number>();
  private reservations = new Map<string, Reservation>();
  /** Names the last pass asked about; rechecks of other names are dropped. */
  private wanted = new Set<string>();
  private current: EndpointStatus[] = [];
  /** The uid of what this process created or updated at each key (trusted as ours, see anchors.ts). */
  private readonly writtenUids = new Map<string, string>();
  /** Keys whose `writtenUids` entry is a Service this process deleted (dropped once it is gone). */
  private readonly deletedKept = new Set<string>();
  private planned: ReadonlyMap<string, Service> = new Map();
  private passes = 0;
  private appliedComplete = false;
  /** The last reason deletes were held back (logged when it changes, not every pass). */
  private heldReason: string | undefined;
  /** Deletes the last guarded pass planned but held back (a complete listing may release them). */
  private heldDeletes = 0;
  private passRunning = false;
  /** Internal Service names whose create the full install record held back in the last pass. */
  private recordFull = new Set<string>();
  /**
   * The states this process's Events cover, kept only while leading; undefined before its first
   * report as leader (that one is checked against what the cluster already shows).
   */
  private eventStates: Map<string, ProjectionState> | undefined;
  /** A report as leader over a complete listing happened this term (later ones need no check). */
  private eventsSettled = false;
  /** The Events already in the cluster, read once per term while reports are checked. */
  private reportedEvents: ReadonlySet<string> | undefined;
  private readonly internalRecord: InternalRecordBook;
  private readonly leftBehind: LeftBehindAliases;
  private readonly pacer: EventPacer;
  private readonly unanchored: ReportedOnce<Service>;
  private readonly deleting: ReportedOnce<Service>;

  constructor(private readonly o: ReconcilerOptions) {
    this.clock = o.clock ?? systemClock;
    this.internalRecord = new InternalRecordBook(o.log, o.internalRecord);
    this.leftBehind = new LeftBehindAliases(o.log);
    // The recorder queues 256 at most; state Events wait here for room, write Events go directly.
    this.pacer = new EventPacer({
      pending: () => o.recorder?.pending ?? 0,
      room: 200,
      send: (e) => this.send(e),
      isLeader: o.isLeader,
      clock: this.clock,
    });
    this.unanchored = new ReportedOnce((key, svc) => {
      if (svc.metadata.labels?.[ROLE_LABEL] === ROLE_INTERNAL)
        o.log.warn(
          { service: key, uid: svc.metadata.uid ?? null },
          "internal Service carries this install's labels but the install record does not list it; claims no port, left alone",
        );
      else
        o.log.warn(
          { service: key },
          "service carries this install's labels but no internal Service names it; left alone",
        );
    });
    // A delete waiting on finalizers was issued once and is not repeated (the plan skips it).
    this.deleting = new ReportedOnce((key, svc) =>
      o.log.info(
        { service: key, detail: deletingReason(svc) },
        'service delete accepted; waiting for its finalizers',
      ),
    );
  }

  get statuses(): readonly EndpointStatus[] {
    return this.current;
  }

  /** Aliases of this install's form that no live projection backs (`/status`'s `leftBehind`). */
  get leftBehindAliases(): readonly LeftBehindAlias[] {
    return this.leftBehind.list;
  }

  /** The Services the last pass wanted, by `namespace/name` (what observed status compares the caches with). */
  get plannedServices(): ReadonlyMap<string, Service> {
    return this.planned;
  }

  /** True once a pass over a complete listing and synced caches has been applied (leader) or computed (follower). */
  get caughtUp(): boolean {
    return this.appliedComplete;
  }

  get passCount(): number {
    return this.passes;
  }

  /**
   * A complete listing that changed nothing needs a pass only if this is true: the last pass held
   * deletes back until such a listing, or a pass is running that may hold some on older knowledge.
   */
  get awaitsListing(): boolean {
    return this.heldDeletes > 0 || this.passRunning;
  }

  /** Runs `workers` queue workers until `signal` aborts (which shuts the queue down). */
  async run(signal: AbortSignal, workers = this.o.writeConcurrency + 1): Promise<void> {
    const { queue } = this.o;
    if (signal.aborted) return;
    signal.addEventListener('abort', () => queue.shutDown(), { once: true });
    const worker = async (): Promise<void> => {
      for (let item = await queue.get(); item !== undefined; item = await queue.get()) {
        try {
          await this.process(item, signal);
        } finally {
          queue.done(item);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.max(2, workers) }, worker));
  }

  private async process(item: WorkItem, signal: AbortSignal): Promise<void> {
    const it = parseItem(item);
    switch (it.kind) {
      case 'pass':
        this.passRunning = true;
        try {
          await this.pass(signal);
          this.o.queue.forget(PASS);
        } catch (err) {
          if (signal.aborted) return;
          const retryInMs = this.o.queue.addRateLimited(PASS);
          this.o.log.error(
            { error: err instanceof Error ? err.stack : String(err), retryInMs },
            'reconcile pass failed',
          );
        } finally {
          this.passRunning = false;
        }
        return;
      case 'read':
        return this.recheckName(it.key, signal);
      case 'retry': {
        const f = this.failures.get(it.key);
        if (f) {
          f.resting = false;
          this.o.queue.requestPass();
        }
        return;
      }
    }
  }

  // ---- read ----

  private read(now: number): PassSnapshot {
    return {
      takenAt: now,
      feed: this.o.feed.snapshot(),
      cluster: this.o.cluster.snapshot(now),
      failures: new Map([...this.failures].map(([k, f]) => [k, { ...f }])),
      leader: this.o.isLeader(),
      termStartedAt: this.o.termStartedAt(),
    };
  }

  private async pass(signal: AbortSignal): Promise<void> {
    const { cluster, log, metrics } = this.o;
    if (!cluster.synced) return;
    this.o.queue.passStarted();
    const snap = this.read(this.clock.now());
    const config = this.o.config();
    const recorded = this.internalRecord.read(snap.cluster.installRecord, config.identity);
    for (const key of this.deletedKept) {
      const live = snap.cluster.owned.get(key);
      if (live?.metadata.uid === this.writtenUids.get(key)) continue;
      this.deletedKept.delete(key);
      if (!live) this.writtenUids.delete(key);
    }

    // Pure: project and plan.
    const t0 = performance.now();
    // Labels alone are not ownership outside the operator namespace: a Service there is ours
    // only when one of our internal Services names it; the others are reported and left alone.
    const anchored = proveOwnership(
      [...snap.cluster.owned.values()],
      config.identity.operatorNamespace,
      recorded,
      (svc) => {
        const uid = svc.metadata.uid;
        return uid !== undefined && this.writtenUids.get(keyOf(svc)) === uid;
      },
    );
    const owned = new Map(anchored.trusted.map((svc) => [keyOf(svc), svc]));
    // Our internal Services no proof makes ours: their endpoints are `unproven` (not
    // name-conflict), and the ports they name go to no other URL.
    const unprovenInternal = anchored.unanchored.filter(
      (svc) =>
        svc.metadata.namespace === config.identity.operatorNamespace &&
        svc.metadata.labels?.[ROLE_LABEL] === ROLE_INTERNAL,
    );
    const unanchored = new Set(anchored.unanchored.map((svc) => keyOf(svc)));
    this.unanchored.seen(anchored.unanchored.map((svc) => [keyOf(svc), svc] as const));
    this.deleting.seen(anchored.trusted.filter(isDeleting).map((svc) => [keyOf(svc), svc] as const));
    // A Service back in our hands (its label restored) is ours at once, whatever a read said before.
    const names = new NameLookup(snap.cluster.names, unanchored, owned);
    const recentlyFreed = freedWithinGrace(snap.cluster.names, snap.takenAt, this.o.foreignNameGraceMs ?? 0);
    // In chunks: a 10,000-endpoint projection takes seconds, and lease renewal, the probes and
    // the watches must get the event loop in between (the snapshot does not change meanwhile).
    const desired = await projectInChunks(
      {
        endpoints: snap.feed.endpoints,
        select: (v) => this.o.selector.evaluate(v),
        cluster: {
          owned: anchored.trusted,
          namespaces: snap.cluster.namespaces,
          namespaceLabels: snap.cluster.namespaceLabels,
          foreign: names,
          foreignDetail: names.details(),
          recentlyFreed,
          unproven: new Map(unprovenInternal.map((svc) => [keyOf(svc), unprovenReason(svc)])),
          unprovenInternal,
        },
        config,
        random: () => this.clock.random(),
        portHints: this.portHints,
        reserved: reservedPorts(this.reservations),
      },
      yieldToEventLoop,
    );
    if (signal.aborted) return;
    this.wanted = names.asked;
    // Everything the plan depends on is known before it is made: names nobody has read are read
    // now (on every replica). All free (or unreadable, planned as free): the projection already
    // treated them so and stands. One held by someone else changes it: project again.
    const unknown = names.unknown(owned);
    if (unknown.length > 0) {
      log.debug({ names: unknown.length }, 'reading Service names before planning');
      await this.readFirst(unknown, signal);
      if (signal.aborted) return;
      if (unknown.some((key) => cluster.name(key)?.holder === 'foreign')) {
        this.o.queue.add(PASS);
        return;
      }
    }
    cluster.retainNames((key) => names.asked.has(key) && !owned.has(key));
    const frozen = new Set(
      [...snap.cluster.namespaces].filter(([, phase]) => phase === 'Terminating').map(([n]) => n),
    );
    // Every delete is judged per endpoint below; a replica that has not listed yet deletes only
    // what it can prove.
    const planned = plan(desired.services, owned, {
      allowDeletes: true,
      frozenNamespaces: frozen,
    });
    const actions = this.guardDeletes(snap, planned, config);
    const planMs = performance.now() - t0;
    metrics.planDuration.observe(planMs / 1000);
    this.passes++;

    // A failure whose Service needs no write any more is over: the cluster holds what we want.
    const plannedKeys = new Set(actions.map((a) => a.key));
    for (const key of [...this.failures.keys()]) if (!plannedKeys.has(key)) this.clearFailure(key);
    let ready = actions.filter((a) => !snap.failures.get(a.key)?.resting);

    // A Service the record cannot list would be unproven after a restart: not created.
    if (snap.leader) {
      const cap = this.o.recordCapacity ?? MAX_RECORDED_INTERNAL_SERVICES;
      const listed = recorded.uids?.size ?? 0;
      const intended = [...recorded.intents].filter(
        (k) => splitKey(k)[0] === config.identity.operatorNamespace,
      );
      const unlisted = intended.filter(
        (k) => !owned.get(k)?.metadata.uid || !recorded.uids?.has(owned.get(k)!.metadata.uid!),
      );
      const full = beyondRecordCapacity(
        ready,
        config.identity.operatorNamespace,
        cap - listed - unlisted.length,
      );
      if (full.held.size > 0 && this.recordFull.size === 0)
        log.error({ held: full.held.size, max: cap }, 'install record full: internal Service creates held');
      this.recordFull = full.held;
      ready = full.keep;
    } else this.recordFull = new Set();

    // Write-ahead (docs/controller.md "Ownership"): the names this pass creates are in the
    // install record before any create, so a successor proves them whatever instant this
    // process dies at. One record write; when it fails the creates wait for a later pass.
    let wroteAhead: string[] = [];
    if (snap.leader) {
      // Aliases before the internal Services that name them: a cut below leaves no internal
      // Service created ahead of its alias (that would cost it a second write, for the uid).
      let creates = createsInPairs(ready, config.identity.operatorNamespace).filter(
        (key) => !recorded.intents.has(key),
      );
      // One record write carries at most this many entries (~40 bytes each, far below a
      // ConfigMap's 1 MiB with the uid list beside them); the rest wait for the next pass.
      const perPass = this.o.intentsPerPass ?? MAX_INTENTS_PER_PASS;
      if (creates.length > perPass) {
        const later = new Set(creates.slice(perPass));
        creates = creates.slice(0, perPass);
        ready = ready.filter((a) => !later.has(a.key));
        this.o.queue.requestPass();
      }
      if (creates.length > 0 && this.o.internalRecord) {
        if (await this.o.internalRecord.writeAhead(creates, signal)) wroteAhead = creates;
        else {
          if (signal.aborted) return;
          const skipped = new Set(creates);
          ready = ready.filter((a) => !skipped.has(a.key));
          const retryInMs = this.o.queue.addRateLimited(PASS);
          log.warn({ creates: creates.length, retryInMs }, 'install record not written; creates wait');
        }
      }
    }

    // Apply (leader only; leadership is checked again before every write).
    let outcomes: ApplyOutcome[] = [];
    let applyMs = 0;
    if (snap.leader && ready.length > 0) {
      const t1 = performance.now();
      const ctx = {
        api: this.o.api,
        identity: config.identity,
        isLeader: this.o.isLeader,
        onWrite: (op: string, result: string) => metrics.kubeWrites.inc({ op, result }),
        signal,
      };
      let applied = 0;
      const count = (): void => {
        applied++;
      };
      // A first sync of thousands of endpoints runs for seconds: say how far it is every 2 s.
      outcomes = await withProgress(
        {
          clock: this.clock,
          done: () => applied,
          total: ready.length,
          report: (done, total) => this.o.log.info({ applied: done, total }, 'sync progress'),
        },
        (async () => {
          // New aliases first: their internal Services record the uid the server gives them
          // (ownership, docs/projection.md), in the same write that creates or updates them.
          const opns = config.identity.operatorNamespace;
          const newAlias = (a: PlanAction): boolean =>
            (a.op === 'create' || a.op === 'recreate') && a.desired.metadata.namespace !== opns;
          const first = await applyAll(ready.filter(newAlias), ctx, this.o.writeConcurrency, count);
          const created = new Map<string, string>();
          for (const out of first)
            if (out.result === 'created' && out.object.metadata.uid !== undefined)
              created.set(out.key, out.object.metadata.uid);
          // Internal Services are deleted last: an alias stays proven (its uid recorded on them)
          // until it is gone itself, so a death in between leaves no orphan.
          const internalDelete = (a: PlanAction): boolean =>
            a.op === 'delete' && a.live.metadata.namespace === opns;
          const rest = withCreatedAliases(
            ready.filter((a) => !newAlias(a) && !internalDelete(a)),
            created,
            opns,
          );
          const second = await applyAll(rest, ctx, this.o.writeConcurrency, count);
          const last = await applyAll(ready.filter(internalDelete), ctx, this.o.writeConcurrency, count);
          return [...first, ...second, ...last];
        })(),
      );
      applyMs = performance.now() - t1;
      metrics.applyDuration.observe(applyMs / 1000);
    }

    // A name whose grace period runs out: pass again then, so the alias is written on time.
    if (recentlyFreed.size > 0) this.o.queue.addAfter(PASS, Math.min(...recentlyFreed.values()));

    await this.recordOutcomes(outcomes);
    this.internalRecord.afterPass({
      leader: snap.leader,
      now: snap.takenAt,
      operatorNamespace: config.identity.operatorNamespace,
      owned: snap.cluster.owned.values(),
      trusted: anchored.trusted,
      outcomes,
      recorded,
      wroteAhead,
    });
    await this.leftBehind.afterPass({
      now: snap.takenAt,
      leader: snap.leader,
      isLeader: this.o.isLeader,
      operatorNamespace: config.identity.operatorNamespace,
      trusted: anchored.trusted,
      unanchored: anchored.unanchored,
      lostLabel: snap.cluster.lostLabel,
      outcomes,
      api: this.o.api,
      signal,
      onWrite: (result) => metrics.kubeWrites.inc({ op: 'relabel', result }),
    });
    await this.report(
      snap,
      desired,
      actions,
      outcomes,
      {
        planMs,
        applyMs,
        deferred: actions.length - ready.length,
      },
      signal,
    );
  }

  /**
   * The deletion rule (docs/controller.md "Deletion"): a delete stands only on a fact about each
   * endpoint it serves (held and deselected by this replica, proven gone, or its alias's
   * namespace closed by policy); the others wait, their ids nominated for a proof.
   */
  private guardDeletes(snap: PassSnapshot, actions: PlanAction[], config: ProjectionConfig): PlanAction[] {
    const opns = config.identity.operatorNamespace;
    const policy = config.namespacePolicy;
    const r = provenDeletes(actions, {
      operatorNamespace: opns,
      held: new Set(snap.feed.endpoints.map((e) => e.id)),
      provenGone: snap.feed.provenGone,
      fresh:
        staleKnowledge(
          {
            now: snap.takenAt,
            listing: snap.feed.listing,
            streamLive: snap.feed.streamLive,
            generation: snap.feed.registration.generation,
          },
          this.o.deleteSafety().knowledgeMaxAgeMs,
        ) === undefined,
      servedIds: (svc) => servedEndpointIds(svc.metadata.annotations),
      policyNamespace: (svc) => {
        if (svc.metadata.namespace !== opns) return svc.metadata.namespace;
        const url = parseEndpointUrl(svc.metadata.annotations?.[ENDPOINT_URL_ANNOTATION] ?? '');
        return url.ok ? url.value.namespace : undefined;
      },
      closedNamespace: (ns) => {
        if (policy === undefined) return undefined;
        const verdict = snap.cluster.namespaces.has(ns)
          ? namespaceVerdict(policy, opns, ns, snap.cluster.namespaceLabels.get(ns) ?? {})
          : namespaceNameVerdict(policy, opns, ns);
        return verdict.open ? undefined : verdict.rule;
      },
    });
    // Before its first complete listing a replica holds nothing it could compare with: a restart
    // must not ask the API about every endpoint one by one. The listing nominates what it lacks.
    if (snap.feed.complete)
      for (const id of r.nominate)
        this.o.feed.nominate(id, 'a Service of this install serves it and the feed does not hold it');
    this.heldDeletes = r.held.size;
    // Logged when the set changes (by its size and first key: no sort of thousands per pass).
    const reason = r.held.size > 0 ? `${r.held.size}:${r.held.keys().next().value ?? ''}` : undefined;
    if (reason !== this.heldReason) {
      this.heldReason = reason;
      if (reason !== undefined)
        this.o.log.info(
          {
            deletes: r.held.size,
            services: [...r.held.keys()].slice(0, 20),
            endpoints: r.nominate.slice(0, 20),
          },
          'deletes deferred: endpoint absence not proven yet',
        );
    }
    return r.actions;
  }

  // ---- record: the one writer of the read model ----

  private async recordOutcomes(outcomes: readonly ApplyOutcome[]): Promise<void> {
    const { cluster, queue, log } = this.o;
    const now = this.clock.now();
    // A first sync of 10,000 endpoints records (and logs) 20,000 writes: hand the event loop back
    // between chunks, as the report does.
    let recorded = 0;
    for (const out of outcomes) {
      if (++recorded % 500 === 0) await yieldToEventLoop();
      const { key } = out;
      const before = this.lastWritten.get(key);
      const r = recordOf(out);
      if (r.pending === 'forget') cluster.forgetWrite(key);
      else if (r.pending && 'write' in r.pending) cluster.recordWrite(key, r.pending.write, now);
      else if (r.pending) cluster.recordDelete(key, r.pending.delete, now);
      if (r.lastWritten === 'clear') this.lastWritten.delete(key);
      else if (r.lastWritten) this.lastWritten.set(key, r.lastWritten.set);
      if (r.failure === 'clear') this.clearFailure(key);
      else if (r.failure) {
        this.failures.set(key, { message: r.failure.message, resting: true });
        const retryInMs = queue.addRateLimited(retryItem(key));
        log.warn(
          {
            service: key,
            op: out.action.op,
            failures: queue.numRequeues(retryItem(key)),
            retryInMs,
            error: r.failure.message,
          },
          'service write failed',
        );
      }
      if (r.foreign) {
        cluster.recordName(key, 'foreign', now);
        queue.addRateLimited(readItem(key));
        log.warn(
          { service: key },
          'service name held by a Service this install does not own; left untouched',
        );
      }
      if (out.result === 'created' || out.result === 'updated') {
        const uid = out.object.metadata.uid;
        if (uid !== undefined) this.writtenUids.set(key, uid);
      } else if (out.result === 'deleted' && out.deleted.metadata.uid !== undefined) {
        // This process deleted that very object: while a finalizer holds it, it stays ours (its
        // delete is waited on, reported `deleting`), not a labelled Service nothing proves.
        this.writtenUids.set(key, out.deleted.metadata.uid);
        this.deletedKept.add(key);
      } else if (out.result === 'deleted' || out.result === 'foreign') {
        this.writtenUids.delete(key);
      }
      if (out.result === 'created' || out.result === 'updated' || out.result === 'deleted') {
        const verb = writeVerb(out, before);
        const svc = out.result === 'deleted' ? out.deleted : out.object;
        log.info(
          {
            service: key,
            op: out.action.op,
            repaired: verb === 'Repaired',
            endpoints: servedEndpointIds(svc.metadata.annotations),
          },
          `service ${verb.toLowerCase()}`,
        );
      }
      const event = writeEvent(out, before);
      if (event) this.send(event);
    }
  }

  private clearFailure(key: string): void {
    if (this.failures.delete(key)) this.o.queue.forget(retryItem(key));
  }

  // ---- reads of names ----

  /**
   * First reads, inside the pass: a GET per name, or one list of the namespace when it has more
   * than SCAN_THRESHOLD of them; as many at once as writes.
   */
  private async readFirst(keys: readonly string[], signal: AbortSignal): Promise<void> {
    const byNamespace = new Map<string, string[]>();
    for (const key of keys) {
      const [ns] = splitKey(key);
      const list = byNamespace.get(ns);
      if (list) list.push(key);
      else byNamespace.set(ns, [key]);
    }
    const reads: (() => Promise<unknown>)[] = [];
    for (const [ns, list] of byNamespace) {
      if (list.length > SCAN_THRESHOLD) reads.push(() => this.readNamespace(ns, list, signal));
      else for (const key of list) reads.push(() => this.readName(key, signal));
    }
    let next = 0;
    const reader = async (): Promise<void> => {
      while (next < reads.length && !signal.aborted) await reads[next++]!();
    };
    await Promise.all(
      Array.from({ length: Math.min(reads.length, Math.max(1, this.o.writeConcurrency)) }, reader),
    );
  }

  /** What one observation of a name means for the queue: rechecked while held by others or unread. */
  private noteName(key: string, seen: NameRecord['holder'], detail?: string): boolean {
    const before = this.o.cluster.name(key)?.detail;
    const changed = this.o.cluster.recordName(key, seen, this.clock.now(), detail);
    if (detail !== undefined && detail !== before)
      this.o.log.warn(
        { service: key, detail },
        'service name held by a Service that lost our label; left untouched',
      );
    const holder = this.o.cluster.name(key)?.holder;
    if (holder === 'free') this.o.queue.forget(readItem(key));
    else this.o.queue.addRateLimited(readItem(key));
    return changed;
  }

  /** A queued recheck of a name held by others (or unread); a changed holder asks for a pass. */
  private async recheckName(key: string, signal: AbortSignal): Promise<void> {
    if (!this.wanted.has(key)) {
      this.o.queue.forget(readItem(key));
      return;
    }
    if (await this.readName(key, signal)) this.o.queue.requestPass();
  }

  /** Reads who holds one name and records it; true when what is known about it changed. */
  private async readName(key: string, signal: AbortSignal): Promise<boolean> {
    const [namespace, name] = splitKey(key);
    let seen: NameRecord['holder'];
    let detail: string | undefined;
    try {
      const live = await this.o.api.get(namespace, name, signal);
      const identity = this.o.config().identity;
      seen = !live || isOwnedBy(live, identity) ? 'free' : 'foreign';
      if (live && seen === 'foreign') detail = lostLabelDetail(live, identity);
      this.o.metrics.kubeReads.inc({ op: 'get', result: 'ok' });
    } catch (err) {
      if (signal.aborted) return false;
      this.o.metrics.kubeReads.inc({ op: 'get', result: 'error' });
      this.o.log.warn(
        { service: key, error: err instanceof Error ? err.message : String(err) },
        'reading a Service name failed; planning it as free and reading it again',
      );
      seen = 'unread';
    }
    return this.noteName(key, seen, detail);
  }

  /** The same for many names of one namespace, with one list. */
  private async readNamespace(
    namespace: string,
    keys: readonly string[],
    signal: AbortSignal,
  ): Promise<boolean> {
    let held: Map<string, Service> | undefined;
    try {
      held = new Map((await this.o.listServices(namespace, signal)).map((s) => [s.metadata.name, s]));
      this.o.metrics.kubeReads.inc({ op: 'list', result: 'ok' });
    } catch (err) {
      if (signal.aborted) return false;
      this.o.metrics.kubeReads.inc({ op: 'list', result: 'error' });
      this.o.log.warn(
        { namespace, names: keys.length, error: err instanceof Error ? err.message : String(err) },
        'listing the Services of a namespace failed; planning its names as free and reading them again',
      );
    }
    let changed = false;
    const identity = this.o.config().identity;
    for (const key of keys) {
      const live = held?.get(splitKey(key)[1]);
      const seen = !held ? 'unread' : !live || isOwnedBy(live, identity) ? 'free' : 'foreign';
      const detail = live && seen === 'foreign' ? lostLabelDetail(live, identity) : undefined;
      if (this.noteName(key, seen, detail)) changed = true;
    }
    return changed;
  }

  // ---- report ----

  private async report(
    snap: PassSnapshot,
    desired: DesiredState,
    actions: readonly PlanAction[],
    outcomes: readonly ApplyOutcome[],
    t: { planMs: number; applyMs: number; deferred: number },
    signal: AbortSignal,
  ): Promise<void> {
    const { log, metrics } = this.o;
    const failures = new Map([...this.failures].map(([k, f]) => [k, f.message]));
    const statuses = withRecordFull(
      withWriteErrors(desired.statuses, desired.services, failures),
      this.recordFull,
      this.o.recordCapacity ?? MAX_RECORDED_INTERNAL_SERVICES,
    );
    this.current = statuses;
    this.reservations = nextReservations(
      this.reservations,
      this.portHints,
      desired.ports,
      snap.takenAt,
      this.o.portReservationMs ?? 0,
    );
    this.planned = asWritten(desired.services, outcomes);
    this.portHints = desired.ports;
    for (const r of desired.repairs)
      log.warn({ kind: r.kind, url: r.url, detail: r.message }, 'forwarder port repaired');
    recordPassMetrics(metrics, statuses, desired.services, actions, outcomes);

    const states = stateChanges(this.previousStates, statuses, desired.services);
    this.previousStates = states.next;
    // A first sync of 10,000 endpoints logs 10,000 changes: hand the event loop back between chunks.
    let logged = 0;
    for (const c of states.changes) {
      if (++logged % 500 === 0) await yieldToEventLoop();
      log.info(
        {
          endpointId: c.status.id,
          url: c.status.url,
          state: c.status.state,
          previous: c.previous ?? null,
          reason: c.status.reason,
        },
        'endpoint state',
      );
    }
    // Only the leader sends state Events; its first report skips what the cluster already
    // shows (the Services' state labels, the Events there), so a restart re-sends nothing.
    let events: readonly EventDecision[] = [];
    if (snap.leader) {
      // Until a report over a complete listing, endpoints arrive page by page: each is new to
      // this process but maybe not to the cluster, so every report until then is checked.
      const checking = this.eventStates === undefined || !this.eventsSettled;
      const covered = stateChanges(this.eventStates ?? new Map(), statuses, desired.services);
      this.eventStates = covered.next;
      events = covered.events;
      if (checking && events.length > 0) {
        this.reportedEvents ??= await this.readReportedEvents(signal);
        events = unreportedOnly(events, statuses, snap.cluster.owned, this.reportedEvents);
      }
      if (snap.feed.complete) {
        this.eventsSettled = true;
        this.reportedEvents = undefined;
      }
    } else {
      this.eventStates = undefined;
      this.eventsSettled = false;
      this.reportedEvents = undefined;
    }
    this.pacer.push(events, signal);

    const succeeded = (o: ApplyOutcome): boolean =>
      o.result === 'created' || o.result === 'updated' || o.result === 'deleted';
    // After writes (or a holder found), pass again so statuses and pending writes settle.
    if (outcomes.some((o) => succeeded(o) || o.result === 'foreign')) this.o.queue.requestPass();
    if (snap.feed.complete && !this.appliedComplete) {
      this.appliedComplete = true;
      this.o.onCaughtUp?.();
      log.info(
        { endpoints: snap.feed.endpoints.length, services: desired.services.size, leader: snap.leader },
        'first complete sync applied',
      );
    }
    if (snap.leader && outcomes.every(succeeded)) metrics.lastApply.set(this.clock.now() / 1000);
    if (actions.length > 0 || outcomes.length > 0) {
      log.info(
        {
          endpoints: snap.feed.endpoints.length,
          desired: desired.services.size,
          actions: actions.length,
          applied: outcomes.filter(succeeded).length,
          failed: outcomes.filter((o) => o.result === 'failed' || o.result === 'conflict').length,
          deferred: t.deferred,
          planMs: Math.round(t.planMs),
          applyMs: Math.round(t.applyMs),
          normalEventsFilteredTotal: this.o.recorder?.filtered ?? 0,
          leader: snap.leader,
        },
        'reconcile pass',
      );
    }
  }

  private async readReportedEvents(signal: AbortSignal): Promise<ReadonlySet<string>> {
    if (!this.o.reportedEvents) return new Set();
    try {
      return await this.o.reportedEvents(signal);
    } catch (err) {
      this.o.log.warn(
        { error: err instanceof Error ? err.message : String(err) },
        'reading existing Events failed; state Events the Services do not show are sent again',
      );
      return new Set();
    }
  }

  private send(e: EventDecision): void {
    const { recorder } = this.o;
    if (!recorder) return;
    const target = e.target.kind === 'Service' ? objectRef(e.target.object, 'Service', 'v1') : this.o.podRef;
    if (!target) return;
    recorder.record(target, e.type, e.reason, e.message);
  }
}
