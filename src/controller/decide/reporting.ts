import { REASON_ANNOTATION, ROLE_LABEL, STATE_LABEL } from '../../binding/identity.js';
import { needsUpdate } from '../../binding/plan.js';
import { servedEndpointIds } from '../../binding/service-format.js';
import type { EndpointStatus, ProjectionState } from '../../binding/types.js';
import type { Service } from '../../kube/objects.js';
import type { ApplyOutcome } from './outcome.js';

/**
 * What the controller tells people about a pass, decided by pure functions: the Event for each
 * write outcome and each endpoint state change, Created vs Repaired, and the `error` overlay on
 * statuses. The reconciler records and sends; these decide.
 */

/** Where an Event goes: the Service involved, or the controller's own Pod. */
export type EventTarget = { kind: 'Service'; object: Service } | { kind: 'Pod' };

export interface EventDecision {
  target: EventTarget;
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

export type WriteVerb = 'Created' | 'Updated' | 'Deleted' | 'Repaired';

/**
 * The verb of a successful write. `Repaired`: what we wanted at the key is what we last wrote
 * there (by the plan's own comparison of the fields we own), yet the plan had to write again, so
 * someone changed or deleted it. `lastWritten` is what this process last wrote at the key.
 */
export function writeVerb(
  outcome: Extract<ApplyOutcome, { result: 'created' | 'updated' | 'deleted' }>,
  lastWritten: Service | undefined,
): WriteVerb {
  if (outcome.result === 'deleted') return 'Deleted';
  const desired = outcome.action.op === 'delete' ? undefined : outcome.action.desired;
  if (desired && lastWritten && !needsUpdate(desired, lastWritten)) return 'Repaired';
  return outcome.result === 'updated' ? 'Updated' : 'Created';
}

function roleOf(svc: Service): string {
  return svc.metadata.labels?.[ROLE_LABEL] ?? 'service';
}

function withEndpoints(text: string, svc: Service): string {
  const ids = servedEndpointIds(svc.metadata.annotations).join(', ');
  return ids ? `${text} (endpoint ${ids})` : text;
}

/** The Event for one write outcome, if any (a foreign holder is told by the state's Event). */
export function writeEvent(
  outcome: ApplyOutcome,
  lastWritten: Service | undefined,
): EventDecision | undefined {
  const { action, key } = outcome;
  switch (outcome.result) {
    case 'created':
    case 'updated':
    case 'deleted': {
      const verb = writeVerb(outcome, lastWritten);
      const object = outcome.result === 'deleted' ? outcome.deleted : outcome.object;
      const text =
        verb === 'Repaired'
          ? `Restored ${roleOf(object)} Service ${key} after it was changed or deleted outside endpoint-binder`
          : `${verb} ${roleOf(object)} Service ${key}`;
      return {
        target: { kind: 'Service', object },
        type: 'Normal',
        reason: verb,
        message: withEndpoints(text, object),
      };
    }
    case 'conflict':
    case 'failed': {
      // A delete whose uid no longer matches: the name holds something else; the next pass decides.
      if (outcome.result === 'conflict' && action.op === 'delete') return undefined;
      const object = action.op === 'delete' ? action.live : action.desired;
      return {
        target: { kind: 'Service', object },
        type: 'Warning',
        reason: 'WriteFailed',
        message: `Could not ${action.op} Service ${key}: ${outcome.message}`,
      };
    }
    case 'foreign':
    case 'skipped':
      return undefined;
  }
}

/**
 * What the reconciler records for one outcome: the write the watch has not shown yet, the key's
 * write failure (set: it rests and is retried with backoff; clear: it is over), the name held by
 * a foreign Service, and what was last written at the key (for `Repaired`).
 */
export interface OutcomeRecord {
  pending: { write: Service } | { delete: Service } | 'forget' | undefined;
  failure: { message: string } | 'clear' | undefined;
  foreign: boolean;
  lastWritten: { set: Service } | 'clear' | undefined;
}

export function recordOf(outcome: ApplyOutcome): OutcomeRecord {
  const { action } = outcome;
  const deletedFirst =
    'deletedFirst' in outcome && outcome.deletedFirst ? { delete: outcome.deletedFirst } : undefined;
  switch (outcome.result) {
    case 'created':
    case 'updated':
      return {
        pending: { write: outcome.object },
        failure: 'clear',
        foreign: false,
        lastWritten: action.op === 'delete' ? undefined : { set: action.desired },
      };
    case 'deleted':
      return { pending: { delete: outcome.deleted }, failure: 'clear', foreign: false, lastWritten: 'clear' };
    case 'foreign':
      return { pending: deletedFirst, failure: 'clear', foreign: true, lastWritten: 'clear' };
    case 'conflict':
      return {
        pending: deletedFirst ?? 'forget',
        failure: action.op === 'delete' ? undefined : { message: outcome.message },
        foreign: false,
        lastWritten: undefined,
      };
    case 'failed':
      return {
        pending: deletedFirst ?? 'forget',
        failure: { message: outcome.message },
        foreign: false,
        lastWritten: undefined,
      };
    case 'skipped':
      return { pending: deletedFirst, failure: undefined, foreign: false, lastWritten: undefined };
  }
}

/** The Warning reason of each state that is not `projected` (none for `not-selected`). */
const STATE_REASON: Partial<Record<ProjectionState, string>> = {
  'namespace-missing': 'NamespaceMissing',
  'namespace-denied': 'NamespaceDenied',
  'name-conflict': 'NameConflict',
  unproven: 'OwnershipUnproven',
  'port-conflict': 'PortConflict',
  'invalid-url': 'InvalidURL',
  'ports-exhausted': 'PortsExhausted',
  'group-too-large': 'GroupTooLarge',
  'record-full': 'RecordFull',
  error: 'WriteFailed',
};

export interface StateChange {
  status: EndpointStatus;
  previous: ProjectionState | undefined;
}

/**
 * Endpoints whose state changed since the previous pass, and the Event for each: a Warning
 * naming the state when it is not `projected`, a Normal `Projected` when an endpoint becomes
 * projected after being something else (not on its first appearance). The Event goes on the
 * endpoint's internal Service when it has one, otherwise on the controller's Pod.
 */
export function stateChanges(
  previous: ReadonlyMap<string, ProjectionState>,
  statuses: readonly EndpointStatus[],
  services: ReadonlyMap<string, Service>,
): { changes: StateChange[]; events: EventDecision[]; next: Map<string, ProjectionState> } {
  const changes: StateChange[] = [];
  const events: EventDecision[] = [];
  const next = new Map<string, ProjectionState>();
  for (const s of statuses) {
    next.set(s.id, s.state);
    const prev = previous.get(s.id);
    if (prev === s.state) continue;
    changes.push({ status: s, previous: prev });
    const internal = s.internalService
      ? services.get(`${s.internalService.namespace}/${s.internalService.name}`)
      : undefined;
    const target: EventTarget = internal ? { kind: 'Service', object: internal } : { kind: 'Pod' };
    const reason = STATE_REASON[s.state];
    if (reason) {
      events.push({ target, type: 'Warning', reason, message: `Endpoint ${s.id} (${s.url}): ${s.reason}` });
    } else if (s.state === 'projected' && prev !== undefined) {
      events.push({
        target,
        type: 'Normal',
        reason: 'Projected',
        message: `Endpoint ${s.id} (${s.url}) is projected`,
      });
    }
  }
  return { changes, events, next };
}

/** The key an Event is known by across restarts: its reason and (truncated) message. */
export function eventKey(reason: string, message: string): string {
  return `${reason}\n${message.length <= 1024 ? message : `${message.slice(0, 1021)}...`}`;
}

/**
 * A process's first state report as leader knows no previous states, so every endpoint not
 * projected would be reported again on each restart. Dropped are the Events whose state the
 * cluster already shows: the internal Service's state label and reason say it, or an Event with
 * that reason and message is still there (`reported`). Pure.
 */
export function unreportedOnly(
  events: readonly EventDecision[],
  statuses: readonly EndpointStatus[],
  live: ReadonlyMap<string, Service>,
  reported: ReadonlySet<string>,
): EventDecision[] {
  const shown = new Set<string>();
  for (const s of statuses) {
    const ref = s.internalService;
    const svc = ref ? live.get(`${ref.namespace}/${ref.name}`) : undefined;
    const labels = svc?.metadata.labels;
    if (
      labels?.[STATE_LABEL] === s.state &&
      (svc?.metadata.annotations?.[REASON_ANNOTATION] ?? '') === s.reason
    )
      shown.add(`Endpoint ${s.id} (${s.url}): ${s.reason}`);
  }
  return events.filter((e) => !shown.has(e.message) && !reported.has(eventKey(e.reason, e.message)));
}

/**
 * Statuses with the `error` overlay: an endpoint served by a desired Service whose last write
 * failed shows `error` with the API server's message until a write of that Service succeeds.
 * `failures` maps a Service key to that message.
 */
export function withWriteErrors(
  statuses: readonly EndpointStatus[],
  services: ReadonlyMap<string, Service>,
  failures: ReadonlyMap<string, string>,
): EndpointStatus[] {
  if (failures.size === 0) return [...statuses];
  const failed = new Map<string, string>();
  for (const [key, message] of failures) {
    const svc = services.get(key);
    if (svc) for (const id of servedEndpointIds(svc.metadata.annotations)) failed.set(id, message);
  }
  return statuses.map((s): EndpointStatus => {
    const msg = failed.get(s.id);
    return msg === undefined ? s : { ...s, state: 'error', reason: `writing its Services failed: ${msg}` };
  });
}

/**
 * Statuses with the `record-full` overlay: an endpoint whose internal Service the full install
 * record held back (`held`: internal Service names) says so, with the fix.
 */
export function withRecordFull(
  statuses: EndpointStatus[],
  held: ReadonlySet<string>,
  max: number,
): EndpointStatus[] {
  if (held.size === 0) return statuses;
  return statuses.map((s): EndpointStatus =>
    s.internalService && held.has(s.internalService.name)
      ? {
          ...s,
          state: 'record-full',
          reason: `the install record lists at most ${max} internal Services and is full; this endpoint is projected once others go (narrow bindings.endpointSelector, or run a second install)`,
        }
      : s,
  );
}

/**
 * The pass's Services as written: an internal Service written with its new alias's uid (learned
 * during the apply) is planned so, or the observed status would call it different from the plan
 * until the next pass.
 */
export function asWritten(
  desired: ReadonlyMap<string, Service>,
  outcomes: readonly ApplyOutcome[],
): ReadonlyMap<string, Service> {
  let out: Map<string, Service> | undefined;
  for (const o of outcomes) {
    if ((o.result !== 'created' && o.result !== 'updated') || o.action.op === 'delete') continue;
    if (desired.get(o.key) === o.action.desired) continue;
    out ??= new Map(desired);
    out.set(o.key, o.action.desired);
  }
  return out ?? desired;
}
