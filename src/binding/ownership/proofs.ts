import type { ConfigMap, Service } from '../../kube/objects.js';
import { anchorOwned, isInternal, namedAliases, type Anchored, type RecordedInternal } from './anchors.js';
import type { InstallIdentity } from '../identity.js';
import type { PlanAction } from '../types.js';
import { isInstallRecordOf, parseRecordedIntents, recordedInternalOf } from './install-record.js';

/**
 * The proofs that a labelled Service is ours (the list is in index.ts, the door), the
 * write-ahead entries' lifetime, and what is said of a Service that proves nothing. Pure.
 */

/** What the install record says about ownership, as one value. */
export interface OwnershipRecord {
  /** Listed internal Service uids; undefined: the record has no list yet (every labelled one counts). */
  uids: RecordedInternal;
  /** Write-ahead entries, `namespace/name`. */
  intents: ReadonlySet<string>;
  /** A malformed or foreign record, said once by the caller. */
  problem?: string;
}

/** Reads both ownership keys of a live install record. */
export function recordedOwnershipOf(cm: ConfigMap | undefined, id: InstallIdentity): OwnershipRecord {
  const internal = recordedInternalOf(cm, id);
  const problems: string[] = internal.problem !== undefined ? [internal.problem] : [];
  let intents: ReadonlySet<string> = new Set();
  // A record that is not this install's proves nothing (recordedInternalOf says so already).
  if (cm !== undefined && isInstallRecordOf(cm, id)) {
    const parsed = parseRecordedIntents(cm);
    if (parsed.ok) intents = new Set(parsed.keys);
    else problems.push(parsed.message);
  }
  return { uids: internal.uids, intents, ...(problems.length > 0 ? { problem: problems.join('; ') } : {}) };
}

/** Splits this install's labelled Services into the proven and the rest (see the proofs above). */
export function proveOwnership(
  owned: readonly Service[],
  operatorNamespace: string,
  record: OwnershipRecord,
  wroteIt: (svc: Service) => boolean,
): Anchored {
  return anchorOwned(owned, operatorNamespace, wroteIt, record.uids, record.intents);
}

/** A write-ahead entry stays this long after its name was last seen empty (a late create may land). */
export const INTENT_ABSENT_GRACE_MS = 5 * 60_000;

export interface IntentResolutionInput {
  intents: ReadonlySet<string>;
  /** Every labelled Service of this install the pass knows (cache, pending writes, this pass's creates), by key. */
  present: ReadonlyMap<string, Service>;
  /** The Services proven ours after this pass (their uids are listed by the same record write). */
  trusted: readonly Service[];
  operatorNamespace: string;
  /** Since when each entry's name has been empty (from the previous call). */
  absentSince: ReadonlyMap<string, number>;
  now: number;
  graceMs?: number;
}

/**
 * The write-ahead entries a record write may drop: those whose Service now has a stronger proof
 * written in the same change (an internal Service's uid; an alias's uid recorded on a proven
 * internal Service), and those whose name stayed empty for the grace period.
 */
export function resolvedIntents(input: IntentResolutionInput): {
  remove: string[];
  absentSince: Map<string, number>;
} {
  const grace = input.graceMs ?? INTENT_ABSENT_GRACE_MS;
  const trustedKeys = new Set(input.trusted.map((s) => `${s.metadata.namespace}/${s.metadata.name}`));
  const named = namedAliases(input.trusted, input.operatorNamespace);
  const remove: string[] = [];
  const absentSince = new Map<string, number>();
  for (const key of input.intents) {
    const live = input.present.get(key);
    if (live === undefined) {
      const since = input.absentSince.get(key) ?? input.now;
      if (input.now - since >= grace) remove.push(key);
      else absentSince.set(key, since);
      continue;
    }
    if (!trustedKeys.has(key) || live.metadata.uid === undefined) continue;
    if (isInternal(live, input.operatorNamespace) || named.get(key)?.has(live.metadata.uid)) remove.push(key);
  }
  return { remove: remove.sort(), absentSince };
}

/**
 * Why a labelled Service that proves nothing blocks an endpoint, and the fix: said instead of
 * "not managed by this install", which would be false for a Service this install once made.
 */
export function unprovenReason(svc: Service): string {
  const key = `${svc.metadata.namespace}/${svc.metadata.name}`;
  return (
    `Service ${key} carries this install's labels but the install record proves neither its uid nor a ` +
    `write-ahead entry for it (a record deleted or edited by hand); delete it ` +
    `(kubectl -n ${svc.metadata.namespace} delete service ${svc.metadata.name}) and the controller creates and records a new one`
  );
}

/**
 * The creates of internal Services beyond what the install record can still list (its uid list
 * is capped, `MAX_RECORDED_INTERNAL_SERVICES`): a Service created but never listed would be
 * unproven after a restart, so it is not created. Held back are those creates and the alias
 * writes that would point at them. `capacity`: uids the record can still take. Pure.
 */
export function beyondRecordCapacity(
  actions: readonly PlanAction[],
  operatorNamespace: string,
  capacity: number,
): { keep: PlanAction[]; held: Set<string> } {
  const held = new Set<string>();
  let room = Math.max(0, capacity);
  for (const a of actions) {
    if (a.op !== 'create' || a.desired.metadata.namespace !== operatorNamespace) continue;
    if (room > 0) room--;
    else held.add(a.desired.metadata.name);
  }
  if (held.size === 0) return { keep: [...actions], held };
  const pointsAtHeld = (a: PlanAction): boolean => {
    if (a.op === 'delete') return false;
    const target = a.desired.spec?.externalName?.split('.')[0];
    return target !== undefined && a.desired.metadata.namespace !== operatorNamespace && held.has(target);
  };
  const keep = actions.filter(
    (a) =>
      !pointsAtHeld(a) &&
      !(
        a.op === 'create' &&
        a.desired.metadata.namespace === operatorNamespace &&
        held.has(a.desired.metadata.name)
      ),
  );
  return { keep, held };
}
