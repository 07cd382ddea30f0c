import { nextReservations } from '../../binding/port-reservations.js';
import { servedEndpointIds } from '../../binding/service-format.js';
import type { DesiredState, EndpointStatus, PlanAction } from '../../binding/types.js';
import type { Service } from '../../kube/objects.js';
import type { ApplyOutcome } from './outcome.js';
import type { ReconcilerMemory, Step, WriteFailure } from './reconciler-memory.js';
import {
  asWritten,
  recordOf,
  stateChanges,
  withRecordFull,
  withWriteErrors,
  writeEvent,
  writeVerb,
  type EventDecision,
} from './reporting.js';
import { readItem, retryItem, type LogLine, type QueueOp } from './work-items.js';

/**
 * The pure transitions at the end of a pass (the memory is reconciler-memory.ts): what the
 * outcomes of its writes teach the read model and the memory, and what the pass reports
 * (statuses, state changes, Events, its summary line).
 */

/** What the read model (cluster.ts) learns from one outcome; the shell applies it with the time. */
export type ReadModelOp =
  /** A create or update the watch has not shown yet. */
  | { op: 'write'; key: string; object: Service }
  /** A delete of that object the watch has not shown yet. */
  | { op: 'delete'; key: string; deleted: Service }
  /** The cache is the truth about the key again (a Conflict, a failure). */
  | { op: 'forget'; key: string }
  /** A create found the name held by a Service that is not ours. */
  | { op: 'foreign'; key: string };

const succeeded = (o: ApplyOutcome): boolean =>
  o.result === 'created' || o.result === 'updated' || o.result === 'deleted';

/** The memory's maps a batch of outcomes changes, copied once per batch. */
interface Books {
  failures: Map<string, WriteFailure>;
  lastWritten: Map<string, Service>;
  writtenUids: Map<string, string>;
  deletedKept: Set<string>;
}

/**
 * The outcomes of a pass's writes: pending writes for the read model, failures (resting, retried
 * with backoff) and their end, names found foreign, what was last written and by which uid, the
 * log line and the Event of each write.
 */
export function outcomesRecorded(
  m: ReconcilerMemory,
  outcomes: readonly ApplyOutcome[],
): Step<{ readModel: ReadModelOp[] }> {
  if (outcomes.length === 0) return { memory: m, queue: [], events: [], log: [], readModel: [] };
  const books: Books = {
    failures: new Map(m.failures),
    lastWritten: new Map(m.lastWritten),
    writtenUids: new Map(m.writtenUids),
    deletedKept: new Set(m.deletedKept),
  };
  const out: Step<{ readModel: ReadModelOp[] }> = {
    memory: m,
    queue: [],
    events: [],
    log: [],
    readModel: [],
  };
  for (const o of outcomes) recordOne(books, o, out);
  out.memory = { ...m, ...books };
  return out;
}

function recordOne(books: Books, out: ApplyOutcome, step: Step<{ readModel: ReadModelOp[] }>): void {
  const { key } = out;
  const before = books.lastWritten.get(key);
  const r = recordOf(out);
  if (r.pending === 'forget') step.readModel.push({ op: 'forget', key });
  else if (r.pending && 'write' in r.pending)
    step.readModel.push({ op: 'write', key, object: r.pending.write });
  else if (r.pending) step.readModel.push({ op: 'delete', key, deleted: r.pending.delete });
  if (r.lastWritten === 'clear') books.lastWritten.delete(key);
  else if (r.lastWritten) books.lastWritten.set(key, r.lastWritten.set);
  if (r.failure === 'clear') {
    if (books.failures.delete(key)) step.queue.push({ op: 'forget', item: retryItem(key) });
  } else if (r.failure) {
    books.failures.set(key, { message: r.failure.message, resting: true });
    step.queue.push(failedWrite(key, out.action.op, r.failure.message));
  }
  if (r.foreign) {
    step.readModel.push({ op: 'foreign', key });
    step.queue.push({ op: 'addRateLimited', item: readItem(key) });
    step.log.push({
      level: 'warn',
      fields: { service: key },
      msg: 'service name held by a Service this install does not own; left untouched',
    });
  }
  rememberUid(books, out);
  if (out.result === 'created' || out.result === 'updated' || out.result === 'deleted') {
    const verb = writeVerb(out, before);
    const svc = out.result === 'deleted' ? out.deleted : out.object;
    step.log.push({
      level: 'info',
      fields: {
        service: key,
        op: out.action.op,
        repaired: verb === 'Repaired',
        endpoints: servedEndpointIds(svc.metadata.annotations),
      },
      msg: `service ${verb.toLowerCase()}`,
    });
  }
  const event = writeEvent(out, before);
  if (event) step.events.push(event);
}

/** A failed write rests and is retried with backoff; the log line says when (the queue decides). */
function failedWrite(key: string, op: PlanAction['op'], message: string): QueueOp {
  return {
    op: 'addRateLimited',
    item: retryItem(key),
    log: {
      level: 'warn',
      fields: { service: key, op, error: message },
      msg: 'service write failed',
      requeues: true,
    },
  };
}

/** The uid of what this process wrote at a key is trusted as ours (binding/ownership/anchors.ts). */
function rememberUid(books: Books, out: ApplyOutcome): void {
  if (out.result === 'created' || out.result === 'updated') {
    const uid = out.object.metadata.uid;
    if (uid !== undefined) books.writtenUids.set(out.key, uid);
  } else if (out.result === 'deleted' && out.deleted.metadata.uid !== undefined) {
    // This process deleted that very object: while a finalizer holds it, it stays ours (its
    // delete is waited on, reported `deleting`), not a labelled Service nothing proves.
    books.writtenUids.set(out.key, out.deleted.metadata.uid);
    books.deletedKept.add(out.key);
  } else if (out.result === 'deleted' || out.result === 'foreign') {
    books.writtenUids.delete(out.key);
  }
}

/**
 * The pass's statuses (with the `error` and `record-full` overlays), its ports remembered (and
 * the ones that went away reserved), its Services as written, and a log line per state change.
 */
export function statusesReported(
  m: ReconcilerMemory,
  p: {
    desired: DesiredState;
    outcomes: readonly ApplyOutcome[];
    takenAt: number;
    portReservationMs: number;
    recordCapacity: number;
  },
): Step<{ statuses: EndpointStatus[] }> {
  const { desired } = p;
  const failures = new Map([...m.failures].map(([k, f]) => [k, f.message]));
  const statuses = withRecordFull(
    withWriteErrors(desired.statuses, desired.services, failures),
    m.recordFull,
    p.recordCapacity,
  );
  const log: LogLine[] = desired.repairs.map((r) => ({
    level: 'warn',
    fields: { kind: r.kind, url: r.url, detail: r.message },
    msg: 'forwarder port repaired',
  }));
  const states = stateChanges(m.previousStates, statuses, desired.services);
  for (const c of states.changes)
    log.push({
      level: 'info',
      fields: {
        endpointId: c.status.id,
        url: c.status.url,
        state: c.status.state,
        previous: c.previous ?? null,
        reason: c.status.reason,
      },
      msg: 'endpoint state',
    });
  const memory: ReconcilerMemory = {
    ...m,
    statuses,
    reservations: nextReservations(
      m.reservations,
      m.portHints,
      desired.ports,
      p.takenAt,
      p.portReservationMs,
    ),
    planned: asWritten(desired.services, p.outcomes),
    portHints: desired.ports,
    previousStates: states.next,
  };
  return { memory, queue: [], events: [], log, statuses };
}

/**
 * The state Events this report may send: only the leader sends them. Until a report as leader
 * over a complete listing, endpoints arrive page by page: each is new to this process but maybe
 * not to the cluster, so those reports are `check`ed against what the cluster already shows
 * (`unreportedOnly`) before anything is sent.
 */
export function leaderEvents(
  m: ReconcilerMemory,
  p: { leader: boolean; statuses: readonly EndpointStatus[]; services: ReadonlyMap<string, Service> },
): { memory: ReconcilerMemory; events: EventDecision[]; check: boolean } {
  if (!p.leader)
    return {
      memory: { ...m, eventStates: undefined, eventsSettled: false, reportedEvents: undefined },
      events: [],
      check: false,
    };
  const checking = m.eventStates === undefined || !m.eventsSettled;
  const covered = stateChanges(m.eventStates ?? new Map(), p.statuses, p.services);
  return {
    memory: { ...m, eventStates: covered.next },
    events: covered.events,
    check: checking && covered.events.length > 0,
  };
}

/** A leader's report over a complete listing settles the term: later reports need no check. */
export function eventsSettled(
  m: ReconcilerMemory,
  p: { leader: boolean; complete: boolean },
): ReconcilerMemory {
  return p.leader && p.complete ? { ...m, eventsSettled: true, reportedEvents: undefined } : m;
}

/**
 * The pass's end: another pass after writes (or a holder found) so statuses and pending writes
 * settle; the first pass over a complete listing is the catch-up; the summary line.
 */
export function passReported(
  m: ReconcilerMemory,
  p: {
    leader: boolean;
    complete: boolean;
    endpoints: number;
    services: number;
    actions: number;
    outcomes: readonly ApplyOutcome[];
    deferred: number;
    planMs: number;
    applyMs: number;
    normalEventsFiltered: number;
  },
): Step<{ caughtUpNow: boolean; allApplied: boolean }> {
  const { outcomes } = p;
  const queue: QueueOp[] = outcomes.some((o) => succeeded(o) || o.result === 'foreign')
    ? [{ op: 'requestPass' }]
    : [];
  const log: LogLine[] = [];
  const caughtUpNow = p.complete && !m.caughtUp;
  if (caughtUpNow)
    log.push({
      level: 'info',
      fields: { endpoints: p.endpoints, services: p.services, leader: p.leader },
      msg: 'first complete sync applied',
    });
  if (p.actions > 0 || outcomes.length > 0)
    log.push({
      level: 'info',
      fields: {
        endpoints: p.endpoints,
        desired: p.services,
        actions: p.actions,
        applied: outcomes.filter(succeeded).length,
        failed: outcomes.filter((o) => o.result === 'failed' || o.result === 'conflict').length,
        deferred: p.deferred,
        planMs: Math.round(p.planMs),
        applyMs: Math.round(p.applyMs),
        normalEventsFilteredTotal: p.normalEventsFiltered,
        leader: p.leader,
      },
      msg: 'reconcile pass',
    });
  return {
    memory: caughtUpNow ? { ...m, caughtUp: true } : m,
    queue,
    events: [],
    log,
    caughtUpNow,
    allApplied: p.leader && outcomes.every(succeeded),
  };
}

/** The Events already in the cluster, read for this term's checked reports. */
export function reportedEventsRead(m: ReconcilerMemory, known: ReadonlySet<string>): ReconcilerMemory {
  return m.reportedEvents === known ? m : { ...m, reportedEvents: known };
}
