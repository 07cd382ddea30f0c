import type { Reservation } from '../../binding/port-reservations.js';
import type { EndpointStatus, ProjectionState } from '../../binding/types.js';
import type { Service } from '../../kube/objects.js';
import type { NameRecord } from './name-lookup.js';
import type { EventDecision } from './reporting.js';
import { retryItem, readItem, type LogLine, type QueueOp } from './work-items.js';

/**
 * What the Reconciler remembers between passes, as one plain value, and the pure transitions
 * that move it on: `(memory, what a pass saw or did) → { memory, queue calls, Events, log lines }`.
 * The shell (reconciler.ts) keeps the current value, does the I/O, hands what it saw to a
 * transition and carries out what comes back; the runner (reconcile-runner.ts) makes the queue
 * calls. Nothing here reads a clock, a cache or the network: time comes in as a number.
 */

/** A Service whose last write failed: its endpoints show `error` until a write succeeds. */
export interface WriteFailure {
  message: string;
  /** Waiting out its backoff: the pass leaves its write for later. */
  resting: boolean;
}

export interface ReconcilerMemory {
  /** Services whose last write failed, by `namespace/name`. */
  readonly failures: ReadonlyMap<string, WriteFailure>;
  /** What this process last wrote at each key (to tell `Repaired` from `Updated`). */
  readonly lastWritten: ReadonlyMap<string, Service>;
  /** Each endpoint's state at the last pass (the `endpoint state` log line says what changed). */
  readonly previousStates: ReadonlyMap<string, ProjectionState>;
  /** URL → the forwarder port the last pass allocated (kept stable across passes). */
  readonly portHints: ReadonlyMap<string, number>;
  /** Ports of URLs that went away, held for the reservation period. */
  readonly reservations: ReadonlyMap<string, Reservation>;
  /** Names the last pass asked about; rechecks of other names are dropped. */
  readonly wanted: ReadonlySet<string>;
  /** The statuses the last pass reported. */
  readonly statuses: readonly EndpointStatus[];
  /** The uid of what this process created or updated at each key (trusted as ours, see binding/ownership/anchors.ts). */
  readonly writtenUids: ReadonlyMap<string, string>;
  /** Keys whose `writtenUids` entry is a Service this process deleted (dropped once it is gone). */
  readonly deletedKept: ReadonlySet<string>;
  /** The Services the last pass wanted, as written (what observed status compares the caches with). */
  readonly planned: ReadonlyMap<string, Service>;
  /** Passes that reached the plan. */
  readonly passes: number;
  /** A pass over a complete listing and synced caches has been applied (leader) or computed (follower). */
  readonly caughtUp: boolean;
  /** The last reason deletes were held back (logged when it changes, not every pass). */
  readonly heldReason: string | undefined;
  /** Deletes the last guarded pass planned but held back (a complete listing may release them). */
  readonly heldDeletes: number;
  /** A pass is running now (it may hold deletes back on older knowledge). */
  readonly passRunning: boolean;
  /** Internal Service names whose create the full install record held back in the last pass. */
  readonly recordFull: ReadonlySet<string>;
  /**
   * The states this process's Events cover, kept only while leading; undefined before its first
   * report as leader (that one is checked against what the cluster already shows).
   */
  readonly eventStates: ReadonlyMap<string, ProjectionState> | undefined;
  /** A report as leader over a complete listing happened this term (later ones need no check). */
  readonly eventsSettled: boolean;
  /** The Events already in the cluster, read once per term while reports are checked. */
  readonly reportedEvents: ReadonlySet<string> | undefined;
}

/** What a transition hands back besides the new memory: what the shell is to do. */
export interface Effects {
  queue: QueueOp[];
  events: EventDecision[];
  log: LogLine[];
}

export type Step<T = object> = { memory: ReconcilerMemory } & Effects & T;

export function initialMemory(): ReconcilerMemory {
  return {
    failures: new Map(),
    lastWritten: new Map(),
    previousStates: new Map(),
    portHints: new Map(),
    reservations: new Map(),
    wanted: new Set(),
    statuses: [],
    writtenUids: new Map(),
    deletedKept: new Set(),
    planned: new Map(),
    passes: 0,
    caughtUp: false,
    heldReason: undefined,
    heldDeletes: 0,
    passRunning: false,
    recordFull: new Set(),
    eventStates: undefined,
    eventsSettled: false,
    reportedEvents: undefined,
  };
}

const none = (): Effects => ({ queue: [], events: [], log: [] });

/**
 * A complete listing that changed nothing needs a pass only if this is true: the last pass held
 * deletes back until such a listing, or a pass is running that may hold some on older knowledge.
 */
export function awaitsListing(m: ReconcilerMemory): boolean {
  return m.heldDeletes > 0 || m.passRunning;
}

export function passRunning(m: ReconcilerMemory, running: boolean): ReconcilerMemory {
  return m.passRunning === running ? m : { ...m, passRunning: running };
}

/** A failed write's backoff ran out (`retry:` item): it may be written again, by a pass. */
export function retryDue(m: ReconcilerMemory, key: string): Step {
  const f = m.failures.get(key);
  if (!f) return { memory: m, ...none() };
  const failures = new Map(m.failures);
  failures.set(key, { ...f, resting: false });
  return { memory: { ...m, failures }, ...none(), queue: [{ op: 'requestPass' }] };
}

/**
 * At a pass's start: a Service this process deleted stays trusted as ours while the cache still
 * shows that very object (a finalizer holds it); once it is gone or replaced, the entry goes.
 */
export function deletesSettled(m: ReconcilerMemory, owned: ReadonlyMap<string, Service>): ReconcilerMemory {
  if (m.deletedKept.size === 0) return m;
  let deletedKept: Set<string> | undefined;
  let writtenUids: Map<string, string> | undefined;
  for (const key of m.deletedKept) {
    const live = owned.get(key);
    if (live?.metadata.uid === m.writtenUids.get(key)) continue;
    deletedKept ??= new Set(m.deletedKept);
    deletedKept.delete(key);
    if (!live) {
      writtenUids ??= new Map(m.writtenUids);
      writtenUids.delete(key);
    }
  }
  if (!deletedKept) return m;
  return { ...m, deletedKept, writtenUids: writtenUids ?? m.writtenUids };
}

/** The names this pass's projection asked about (a recheck of any other name is dropped). */
export function namesAsked(m: ReconcilerMemory, asked: ReadonlySet<string>): ReconcilerMemory {
  return { ...m, wanted: asked };
}

/**
 * The deletion rule held `held` deletes back (keys), nominating `nominate` endpoint ids for a
 * proof: remembered, and logged when the set changes (by its size and first key: no sort of
 * thousands per pass).
 */
export function deletesHeld(
  m: ReconcilerMemory,
  held: ReadonlyMap<string, unknown>,
  nominate: readonly string[],
): Step {
  const reason = held.size > 0 ? `${held.size}:${held.keys().next().value ?? ''}` : undefined;
  const memory = { ...m, heldDeletes: held.size, heldReason: reason };
  const log: LogLine[] = [];
  if (reason !== m.heldReason && reason !== undefined)
    log.push({
      level: 'info',
      fields: {
        deletes: held.size,
        services: [...held.keys()].slice(0, 20),
        endpoints: nominate.slice(0, 20),
      },
      msg: 'deletes deferred: endpoint absence not proven yet',
    });
  return { memory, ...none(), log };
}

/**
 * The plan is made (`plannedKeys`: the keys it writes): one more pass counted, and a failure whose
 * Service needs no write any more is over (the cluster holds what we want).
 */
export function passPlanned(m: ReconcilerMemory, plannedKeys: ReadonlySet<string>): Step {
  const cleared = failuresCleared(m.failures, (key) => !plannedKeys.has(key));
  return {
    memory: { ...m, passes: m.passes + 1, failures: cleared.failures },
    ...none(),
    queue: cleared.queue,
  };
}

/** Drops the failures `over` says are over; each one's backoff is forgotten. */
export function failuresCleared(
  failures: ReadonlyMap<string, WriteFailure>,
  over: (key: string) => boolean,
): { failures: ReadonlyMap<string, WriteFailure>; queue: QueueOp[] } {
  const queue: QueueOp[] = [];
  let out: Map<string, WriteFailure> | undefined;
  for (const key of failures.keys()) {
    if (!over(key)) continue;
    out ??= new Map(failures);
    out.delete(key);
    queue.push({ op: 'forget', item: retryItem(key) });
  }
  return { failures: out ?? failures, queue };
}

/**
 * The internal Service creates the full install record holds back this pass (`held`: names; none
 * while not leading): remembered for the `record-full` overlay, logged when it starts.
 */
export function recordFullHeld(m: ReconcilerMemory, held: ReadonlySet<string>, max: number): Step {
  const log: LogLine[] = [];
  if (held.size > 0 && m.recordFull.size === 0)
    log.push({
      level: 'error',
      fields: { held: held.size, max },
      msg: 'install record full: internal Service creates held',
    });
  return { memory: { ...m, recordFull: held }, ...none(), log };
}

/**
 * What one read of a name means (`before`/`after`: what the read model knew before and after it):
 * rechecked with backoff while held by others or unread, forgotten once free; a new reason why
 * its holder is not ours is logged.
 */
export function nameNoted(
  key: string,
  before: NameRecord | undefined,
  after: NameRecord | undefined,
  detail: string | undefined,
): Effects {
  const log: LogLine[] = [];
  if (detail !== undefined && detail !== before?.detail)
    log.push({
      level: 'warn',
      fields: { service: key, detail },
      msg: 'service name held by a Service that lost our label; left untouched',
    });
  const queue: QueueOp[] = [
    after?.holder === 'free'
      ? { op: 'forget', item: readItem(key) }
      : { op: 'addRateLimited', item: readItem(key) },
  ];
  return { queue, events: [], log };
}

/** A queued recheck of a name (`read:` item): only a name the last pass asked about is read again. */
export function recheckWanted(m: ReconcilerMemory, key: string): { read: boolean; queue: QueueOp[] } {
  return m.wanted.has(key)
    ? { read: true, queue: [] }
    : { read: false, queue: [{ op: 'forget', item: readItem(key) }] };
}
