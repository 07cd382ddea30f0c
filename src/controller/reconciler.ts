import {
  beyondRecordCapacity,
  MAX_RECORDED_INTERNAL_SERVICES,
  proveOwnership,
  ROLE_INTERNAL,
  ROLE_LABEL,
  unprovenReason,
  withCreatedAliases,
  type Anchored,
  type InternalServicesChange,
  type LeftBehindAlias,
  type OwnershipRecord,
} from '../binding/ownership/index.js';
import { provenDeletes, staleKnowledge, type DeleteSafety } from '../binding/delete-guard.js';
import { namespaceNameVerdict, namespaceVerdict } from '../binding/namespace-policy.js';
import { parseEndpointUrl } from '../binding/endpoint-url.js';
import { ENDPOINT_URL_ANNOTATION } from '../binding/identity.js';
import { deletingReason, isDeleting, plan } from '../binding/plan.js';
import { reservedPorts } from '../binding/port-reservations.js';
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
import type { DesiredState, EndpointStatus, PlanAction, ProjectionConfig } from '../binding/types.js';
import { keyOf, objectRef, type EventRecorder, type InvolvedObject, type Service } from '../kube/index.js';
import type { Logger } from '../log/logger.js';
import { systemClock, type Clock } from '../time/clock.js';
import { withProgress } from '../time/progress.js';
import { applyAll, type ApplyOutcome, type ServiceApi } from './apply.js';
import type { ClusterReadModel, ClusterSnapshot } from './cluster.js';
import type { FeedSnapshot } from './feed.js';
import type { ControllerMetrics } from './metrics.js';
import type { ControllerQueue } from './queue.js';
import { PASS, parseItem, type LogLine, type QueueOp, type WorkItem } from './decide/work-items.js';
import {
  awaitsListing,
  deletesHeld,
  deletesSettled,
  initialMemory,
  namesAsked,
  passPlanned,
  passRunning,
  recheckWanted,
  recordFullHeld,
  retryDue,
  type ReconcilerMemory,
  type Step,
  type WriteFailure,
} from './decide/reconciler-memory.js';
import {
  eventsSettled,
  leaderEvents,
  outcomesRecorded,
  passReported,
  reportedEventsRead,
  statusesReported,
} from './decide/pass-report.js';
import { unreportedOnly, type EventDecision } from './decide/reporting.js';
import { NameReads } from './name-reads.js';
import { runReconcileWorkers, type Reconcile, type ReconcileResult } from './reconcile-runner.js';

export type { WriteFailure } from './decide/reconciler-memory.js';

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
  /** The read model: ClusterState (cluster.ts) in the controller, any faithful stand-in in a test. */
  cluster: ClusterReadModel;
  /** Only the runner (reconcile-runner.ts) calls it. */
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

/** Log lines, outcomes and read-model updates handled between two yields to the event loop. */
const CHUNK = 500;

/** Who is proven ours this pass, and the names the projection asks about. */
interface Proof {
  anchored: Anchored;
  owned: Map<string, Service>;
  unprovenInternal: Service[];
  names: NameLookup;
}

/**
 * The reconcile pass, as external-dns's `RunOnce`: read (one snapshot) → `project()` → read the
 * names nobody has read → `plan()` → apply (leader only) → record outcomes → report. What it
 * remembers between passes is one plain value (decide/reconciler-memory.ts) moved on by pure
 * transitions; it never calls the work queue but returns the queue calls it wants, which the
 * runner (reconcile-runner.ts) makes. It never sleeps or computes a delay (the queue's rate
 * limiter does), and it is the only writer of what the read model learns.
 */
export class Reconciler implements Reconcile {
  private readonly clock: Clock;
  private memory: ReconcilerMemory = initialMemory();
  private readonly internalRecord: InternalRecordBook;
  private readonly leftBehind: LeftBehindAliases;
  private readonly pacer: EventPacer;
  private readonly unanchored: ReportedOnce<Service>;
  private readonly deleting: ReportedOnce<Service>;
  private readonly names: NameReads;

  constructor(private readonly o: ReconcilerOptions) {
    this.clock = o.clock ?? systemClock;
    this.names = new NameReads({ ...o, clock: this.clock, concurrency: o.writeConcurrency });
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
    return this.memory.statuses;
  }

  /** Aliases of this install's form that no live projection backs (`/status`'s `leftBehind`). */
  get leftBehindAliases(): readonly LeftBehindAlias[] {
    return this.leftBehind.list;
  }

  /** The Services the last pass wanted, by `namespace/name` (what observed status compares the caches with). */
  get plannedServices(): ReadonlyMap<string, Service> {
    return this.memory.planned;
  }

  /** True once a pass over a complete listing and synced caches has been applied (leader) or computed (follower). */
  get caughtUp(): boolean {
    return this.memory.caughtUp;
  }

  get passCount(): number {
    return this.memory.passes;
  }

  /**
   * A complete listing that changed nothing needs a pass only if this is true: the last pass held
   * deletes back until such a listing, or a pass is running that may hold some on older knowledge.
   */
  get awaitsListing(): boolean {
    return awaitsListing(this.memory);
  }

  get readyToPass(): boolean {
    return this.o.cluster.synced;
  }

  /** Runs `workers` queue workers (reconcile-runner.ts) until `signal` aborts (which shuts the queue down). */
  run(signal: AbortSignal, workers = this.o.writeConcurrency + 1): Promise<void> {
    return runReconcileWorkers({ reconciler: this, queue: this.o.queue, log: this.o.log, signal, workers });
  }

  /** One work item: a pass, a recheck of a name, or a failed write's backoff run out. */
  async reconcile(item: WorkItem, signal: AbortSignal): Promise<ReconcileResult> {
    const out: QueueOp[] = [];
    const it = parseItem(item);
    switch (it.kind) {
      case 'pass':
        this.memory = passRunning(this.memory, true);
        try {
          await this.pass(out, signal);
          return { queue: out };
        } catch (error) {
          return { queue: out, error };
        } finally {
          this.memory = passRunning(this.memory, false);
        }
      case 'read':
        await this.recheckName(it.key, out, signal);
        return { queue: out };
      case 'retry':
        this.take(retryDue(this.memory, it.key), out);
        return { queue: out };
    }
  }

  /** Moves the memory on and carries out the rest of a transition: queue calls, log lines, write Events. */
  private take(step: Step, out: QueueOp[]): void {
    this.memory = step.memory;
    for (const op of step.queue) out.push(op);
    this.write(step.log);
    for (const e of step.events) this.send(e);
  }

  private write(lines: readonly LogLine[]): void {
    for (const l of lines) this.o.log[l.level](l.fields, l.msg);
  }

  /** The same for thousands of lines (a first sync): the event loop is handed back between chunks. */
  private async writeInChunks(lines: readonly LogLine[]): Promise<void> {
    for (let i = 0; i < lines.length; i += CHUNK) {
      if (i > 0) await yieldToEventLoop();
      this.write(lines.slice(i, i + CHUNK));
    }
  }

  // ---- read ----

  private read(now: number): PassSnapshot {
    return {
      takenAt: now,
      feed: this.o.feed.snapshot(),
      cluster: this.o.cluster.snapshot(now),
      failures: new Map([...this.memory.failures].map(([k, f]) => [k, { ...f }])),
      leader: this.o.isLeader(),
      termStartedAt: this.o.termStartedAt(),
    };
  }

  private async pass(out: QueueOp[], signal: AbortSignal): Promise<void> {
    const { cluster, metrics } = this.o;
    if (!cluster.synced) return;
    const snap = this.read(this.clock.now());
    const config = this.o.config();
    const recorded = this.internalRecord.read(snap.cluster.installRecord, config.identity);
    this.memory = deletesSettled(this.memory, snap.cluster.owned);

    // Pure: project and plan.
    const t0 = performance.now();
    const proof = this.prove(snap, config, recorded);
    const projected = await this.projectKnowingNames(snap, config, proof, out, signal);
    if (projected === undefined) return;
    const { desired, recentlyFreed } = projected;
    const { names } = proof;
    cluster.retainNames((key) => names.asked.has(key) && !proof.owned.has(key));
    const frozen = new Set(
      [...snap.cluster.namespaces].filter(([, phase]) => phase === 'Terminating').map(([n]) => n),
    );
    // Every delete is judged per endpoint below; a replica that has not listed yet deletes only
    // what it can prove.
    const planned = plan(desired.services, proof.owned, {
      allowDeletes: true,
      frozenNamespaces: frozen,
    });
    const actions = this.guardDeletes(snap, planned, config);
    const planMs = performance.now() - t0;
    metrics.planDuration.observe(planMs / 1000);
    this.take(passPlanned(this.memory, new Set(actions.map((a) => a.key))), out);
    let ready = actions.filter((a) => !snap.failures.get(a.key)?.resting);
    ready = this.withinRecordCapacity(snap, config, recorded, proof.owned, ready, out);
    const ahead = await this.writeAhead(snap, config, recorded, ready, out, signal);
    if (ahead === undefined) return;
    ready = ahead.ready;

    // Apply (leader only; leadership is checked again before every write).
    const applying = snap.leader && ready.length > 0;
    const t1 = performance.now();
    const outcomes = applying ? await this.apply(ready, config, signal) : [];
    const applyMs = applying ? performance.now() - t1 : 0;
    if (applying) metrics.applyDuration.observe(applyMs / 1000);

    // A name whose grace period runs out: pass again then, so the alias is written on time.
    if (recentlyFreed.size > 0)
      out.push({ op: 'addAfter', item: PASS, delayMs: Math.min(...recentlyFreed.values()) });

    await this.recordOutcomes(outcomes, out);
    await this.afterPass(snap, config, proof, recorded, outcomes, ahead.wroteAhead, signal);
    await this.report(
      snap,
      desired,
      actions,
      outcomes,
      { planMs, applyMs, deferred: actions.length - ready.length },
      out,
      signal,
    );
  }

  /**
   * Labels alone are not ownership outside the operator namespace: a Service there is ours only
   * when one of our internal Services names it (or the record or this process proves it); the
   * others are reported and left alone.
   */
  private prove(snap: PassSnapshot, config: ProjectionConfig, recorded: OwnershipRecord): Proof {
    const { writtenUids } = this.memory;
    const anchored = proveOwnership(
      [...snap.cluster.owned.values()],
      config.identity.operatorNamespace,
      recorded,
      (svc) => {
        const uid = svc.metadata.uid;
        return uid !== undefined && writtenUids.get(keyOf(svc)) === uid;
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
    return { anchored, owned, unprovenInternal, names };
  }

  /**
   * Projects the account. Everything the plan depends on is known before it is made: names nobody
   * has read are read now (on every replica). All free (or unreadable, planned as free): the
   * projection already treated them so and stands. One held by someone else changes it: project
   * again (undefined: this pass ends and asks for another).
   */
  private async projectKnowingNames(
    snap: PassSnapshot,
    config: ProjectionConfig,
    proof: Proof,
    out: QueueOp[],
    signal: AbortSignal,
  ): Promise<{ desired: DesiredState; recentlyFreed: Map<string, number> } | undefined> {
    const { anchored, names, unprovenInternal } = proof;
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
        portHints: this.memory.portHints,
        reserved: reservedPorts(this.memory.reservations),
      },
      yieldToEventLoop,
    );
    if (signal.aborted) return undefined;
    this.memory = namesAsked(this.memory, names.asked);
    const unknown = names.unknown(proof.owned);
    if (unknown.length > 0) {
      this.o.log.debug({ names: unknown.length }, 'reading Service names before planning');
      await this.names.readFirst(unknown, out, signal);
      if (signal.aborted) return undefined;
      if (unknown.some((key) => this.o.cluster.name(key)?.holder === 'foreign')) {
        out.push({ op: 'add', item: PASS });
        return undefined;
      }
    }
    return { desired, recentlyFreed };
  }

  /** A Service the record cannot list would be unproven after a restart: not created. */
  private withinRecordCapacity(
    snap: PassSnapshot,
    config: ProjectionConfig,
    recorded: OwnershipRecord,
    owned: ReadonlyMap<string, Service>,
    ready: PlanAction[],
    out: QueueOp[],
  ): PlanAction[] {
    const cap = this.o.recordCapacity ?? MAX_RECORDED_INTERNAL_SERVICES;
    if (!snap.leader) {
      this.take(recordFullHeld(this.memory, new Set(), cap), out);
      return ready;
    }
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
    this.take(recordFullHeld(this.memory, full.held, cap), out);
    return full.keep;
  }

  /**
   * Write-ahead (docs/controller.md "Ownership"): the names this pass creates are in the install
   * record before any create, so a successor proves them whatever instant this process dies at.
   * One record write; when it fails the creates wait for a later pass (undefined: aborted).
   */
  private async writeAhead(
    snap: PassSnapshot,
    config: ProjectionConfig,
    recorded: OwnershipRecord,
    ready: PlanAction[],
    out: QueueOp[],
    signal: AbortSignal,
  ): Promise<{ ready: PlanAction[]; wroteAhead: string[] } | undefined> {
    if (!snap.leader) return { ready, wroteAhead: [] };
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
      out.push({ op: 'requestPass' });
    }
    if (creates.length === 0 || !this.o.internalRecord) return { ready, wroteAhead: [] };
    if (await this.o.internalRecord.writeAhead(creates, signal)) return { ready, wroteAhead: creates };
    if (signal.aborted) return undefined;
    const skipped = new Set(creates);
    out.push({
      op: 'addRateLimited',
      item: PASS,
      log: {
        level: 'warn',
        fields: { creates: creates.length },
        msg: 'install record not written; creates wait',
      },
    });
    return { ready: ready.filter((a) => !skipped.has(a.key)), wroteAhead: [] };
  }

  /** The writes, in the order that keeps every Service proven (docs/controller.md "Ownership"). */
  private async apply(
    ready: PlanAction[],
    config: ProjectionConfig,
    signal: AbortSignal,
  ): Promise<ApplyOutcome[]> {
    const { metrics } = this.o;
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
    const concurrency = this.o.writeConcurrency;
    // A first sync of thousands of endpoints runs for seconds: say how far it is every 2 s.
    return withProgress(
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
        const first = await applyAll(ready.filter(newAlias), ctx, concurrency, count);
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
        const second = await applyAll(rest, ctx, concurrency, count);
        const last = await applyAll(ready.filter(internalDelete), ctx, concurrency, count);
        return [...first, ...second, ...last];
      })(),
    );
  }

  /** The install record's lists and the left-behind aliases, after the writes. */
  private async afterPass(
    snap: PassSnapshot,
    config: ProjectionConfig,
    proof: Proof,
    recorded: OwnershipRecord,
    outcomes: ApplyOutcome[],
    wroteAhead: string[],
    signal: AbortSignal,
  ): Promise<void> {
    const { anchored } = proof;
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
      onWrite: (result) => this.o.metrics.kubeWrites.inc({ op: 'relabel', result }),
    });
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
    const held = deletesHeld(this.memory, r.held, r.nominate);
    this.memory = held.memory;
    this.write(held.log);
    return r.actions;
  }

  // ---- record: the one writer of the read model ----

  private async recordOutcomes(outcomes: readonly ApplyOutcome[], out: QueueOp[]): Promise<void> {
    const { cluster } = this.o;
    const now = this.clock.now();
    const step = outcomesRecorded(this.memory, outcomes);
    this.memory = step.memory;
    for (const op of step.queue) out.push(op);
    // A first sync of 10,000 endpoints records (and logs) 20,000 writes: hand the event loop back
    // between chunks, as the report does.
    for (let i = 0; i < step.readModel.length; i++) {
      if (i > 0 && i % CHUNK === 0) await yieldToEventLoop();
      const op = step.readModel[i]!;
      if (op.op === 'forget') cluster.forgetWrite(op.key);
      else if (op.op === 'write') cluster.recordWrite(op.key, op.object, now);
      else if (op.op === 'delete') cluster.recordDelete(op.key, op.deleted, now);
      else cluster.recordName(op.key, 'foreign', now);
    }
    await this.writeInChunks(step.log);
    for (const e of step.events) this.send(e);
  }

  // ---- reads of names ----

  /** A queued recheck of a name held by others (or unread); a changed holder asks for a pass. */
  private async recheckName(key: string, out: QueueOp[], signal: AbortSignal): Promise<void> {
    const wanted = recheckWanted(this.memory, key);
    for (const op of wanted.queue) out.push(op);
    if (wanted.read && (await this.names.readName(key, out, signal))) out.push({ op: 'requestPass' });
  }

  // ---- report ----

  private async report(
    snap: PassSnapshot,
    desired: DesiredState,
    actions: readonly PlanAction[],
    outcomes: readonly ApplyOutcome[],
    t: { planMs: number; applyMs: number; deferred: number },
    out: QueueOp[],
    signal: AbortSignal,
  ): Promise<void> {
    const { metrics } = this.o;
    const reported = statusesReported(this.memory, {
      desired,
      outcomes,
      takenAt: snap.takenAt,
      portReservationMs: this.o.portReservationMs ?? 0,
      recordCapacity: this.o.recordCapacity ?? MAX_RECORDED_INTERNAL_SERVICES,
    });
    this.memory = reported.memory;
    const { statuses } = reported;
    recordPassMetrics(metrics, statuses, desired.services, actions, outcomes);
    // A first sync of 10,000 endpoints logs 10,000 changes: hand the event loop back between chunks.
    await this.writeInChunks(reported.log);
    await this.sendStateEvents(snap, statuses, desired.services, signal);
    const end = passReported(this.memory, {
      leader: snap.leader,
      complete: snap.feed.complete,
      endpoints: snap.feed.endpoints.length,
      services: desired.services.size,
      actions: actions.length,
      outcomes,
      ...t,
      normalEventsFiltered: this.o.recorder?.filtered ?? 0,
    });
    this.take(end, out);
    if (end.caughtUpNow) this.o.onCaughtUp?.();
    if (end.allApplied) metrics.lastApply.set(this.clock.now() / 1000);
  }

  /**
   * Only the leader sends state Events; its first report skips what the cluster already shows
   * (the Services' state labels, the Events there), so a restart re-sends nothing.
   */
  private async sendStateEvents(
    snap: PassSnapshot,
    statuses: readonly EndpointStatus[],
    services: ReadonlyMap<string, Service>,
    signal: AbortSignal,
  ): Promise<void> {
    const decided = leaderEvents(this.memory, { leader: snap.leader, statuses, services });
    this.memory = decided.memory;
    let { events } = decided;
    if (decided.check) {
      const known = this.memory.reportedEvents ?? (await this.readReportedEvents(signal));
      this.memory = reportedEventsRead(this.memory, known);
      events = unreportedOnly(events, statuses, snap.cluster.owned, known);
    }
    this.memory = eventsSettled(this.memory, { leader: snap.leader, complete: snap.feed.complete });
    this.pacer.push(events, signal);
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
