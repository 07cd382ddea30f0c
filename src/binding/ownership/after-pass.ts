import { keyOf, type Service } from '../../kube/objects.js';
import { isInternal } from './anchors.js';
import { resolvedIntents, type OwnershipRecord } from './proofs.js';
import { recordedInternalChange, type RecordedInternalChange } from './recorded-internal.js';

/**
 * What the leader adds to and removes from the install record's ownership lists after a pass
 * (docs/controller.md "Ownership"): uids of the internal Services it trusted or created, the
 * write-ahead entries resolved by a stronger proof or by a name empty for the grace period. Pure;
 * the controller's InternalRecordBook keeps the absence clocks between passes and hands the
 * change to the writer.
 */

/** What became of one write of the pass, as far as ownership cares (the controller's ApplyOutcome fits). */
export type PassWrite =
  | { key: string; result: 'created' | 'updated'; object: Service }
  | { key: string; result: 'deleted'; deleted: Service }
  | { key: string; result: 'foreign' | 'conflict' | 'failed' | 'skipped' };

export interface AfterPassInput {
  now: number;
  operatorNamespace: string;
  owned: Iterable<Service>;
  trusted: readonly Service[];
  outcomes: readonly PassWrite[];
  recorded: OwnershipRecord;
  /** The write-ahead entries this pass wrote (not yet in `recorded`). */
  wroteAhead?: readonly string[];
  /** Since when each listed uid has been absent (from the previous pass). */
  absentSince: ReadonlyMap<string, number>;
  /** Since when each write-ahead entry's name has been empty (from the previous pass). */
  intentAbsentSince: ReadonlyMap<string, number>;
}

export interface AfterPass {
  /** The uid list's change; `changed`: there is something to write for it. */
  change: RecordedInternalChange;
  /** Write-ahead entries to drop. */
  removeIntents: string[];
  /** For the next pass. */
  intentAbsentSince: Map<string, number>;
}

export function ownershipAfterPass(p: AfterPassInput): AfterPass {
  const internal = (svc: Service): boolean => isInternal(svc, p.operatorNamespace);
  const present = new Set<string>();
  const presentByKey = new Map<string, Service>();
  for (const svc of p.owned) {
    presentByKey.set(keyOf(svc), svc);
    if (internal(svc) && svc.metadata.uid) present.add(svc.metadata.uid);
  }
  const trustedByKey = new Map(p.trusted.map((svc) => [keyOf(svc), svc]));
  const deleted = new Set<string>();
  for (const out of p.outcomes) {
    if (out.result === 'deleted') {
      // A delete that finalizers hold leaves the Service in place (deletionTimestamp set) until
      // they let go: it stays listed while it is there, so no pass sees our own Service unlisted
      // (distrusted) while it waits; once gone, the absence grace unlists it.
      const finalizers: unknown = out.deleted.metadata['finalizers'];
      const held = Array.isArray(finalizers) && finalizers.length > 0;
      if (out.deleted.metadata.uid && !held) deleted.add(out.deleted.metadata.uid);
      presentByKey.delete(out.key);
      trustedByKey.delete(out.key);
    }
    if (out.result === 'created' || out.result === 'updated') {
      presentByKey.set(out.key, out.object);
      trustedByKey.set(out.key, out.object);
      if (internal(out.object) && out.object.metadata.uid) present.add(out.object.metadata.uid);
    }
  }
  const trustedAfter = [...trustedByKey.values()];
  const trusted = new Set<string>();
  for (const svc of trustedAfter) if (internal(svc) && svc.metadata.uid) trusted.add(svc.metadata.uid);
  const change = recordedInternalChange({
    recorded: p.recorded.uids,
    present,
    trusted,
    deleted,
    absentSince: p.absentSince,
    now: p.now,
  });
  const intents = resolvedIntents({
    intents: new Set([...p.recorded.intents, ...(p.wroteAhead ?? [])]),
    present: presentByKey,
    trusted: trustedAfter,
    operatorNamespace: p.operatorNamespace,
    absentSince: p.intentAbsentSince,
    now: p.now,
  });
  return { change, removeIntents: intents.remove, intentAbsentSince: intents.absentSince };
}
