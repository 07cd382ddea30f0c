import type { InstallIdentity } from '../binding/identity.js';
import { ROLE_INTERNAL, ROLE_LABEL } from '../binding/identity.js';
import { recordedOwnershipOf, resolvedIntents, type OwnershipRecord } from '../binding/ownership.js';
import { recordedInternalChange } from '../binding/recorded-internal.js';
import { keyOf, type ConfigMap, type Service } from '../kube/index.js';
import type { Logger } from '../log/logger.js';
import type { ApplyOutcome } from './apply.js';
import type { InternalServicesChange } from './install-record-writer.js';

/**
 * The reconciler's side of the install record's ownership lists (docs/controller.md
 * "Ownership"): reading them (a malformed value reported once per value) and deciding, after each
 * pass, what the leader adds and removes: uids of the internal Services it trusted or created,
 * write-ahead entries resolved by a stronger proof or by a name empty for the grace period. Every
 * replica tracks how long listed uids and entries have been absent, so a new leader prunes on time.
 */
export class InternalRecordBook {
  private absentSince = new Map<string, number>();
  private intentAbsentSince = new Map<string, number>();
  private lastProblem: string | undefined;
  private lastRead:
    { record: ConfigMap | undefined; identity: InstallIdentity; result: OwnershipRecord } | undefined;

  constructor(
    private readonly log: Logger,
    private readonly writer: { recordInternalServices(change: InternalServicesChange): void } | undefined,
  ) {}

  /**
   * The lists (uids undefined: no record yet, every labelled internal Service counts). A malformed
   * uid list is read as none, so the leader lists what is there again rather than distrusting its
   * own Services.
   */
  read(record: ConfigMap | undefined, identity: InstallIdentity): OwnershipRecord {
    // The cache hands out the same object until the record changes; parsing 20,000 uids every
    // pass is most of this function's cost, so one parse per object and identity.
    const memo = this.lastRead;
    const result =
      memo && memo.record === record && memo.identity === identity
        ? memo.result
        : recordedOwnershipOf(record, identity);
    this.lastRead = { record, identity, result };
    if (result.problem !== undefined && this.lastProblem !== result.problem)
      this.log.error({ error: result.problem }, 'install record internal-services not read');
    this.lastProblem = result.problem;
    return result;
  }

  /**
   * After a pass: list every internal Service trusted or just created, unlist the ones deleted or
   * gone a while, drop the write-ahead entries now proven otherwise. One write per pass that
   * changes the lists, at most (the writer batches); only the leader writes.
   */
  afterPass(p: {
    leader: boolean;
    now: number;
    operatorNamespace: string;
    owned: Iterable<Service>;
    trusted: readonly Service[];
    outcomes: readonly ApplyOutcome[];
    recorded: OwnershipRecord;
    /** The write-ahead entries this pass wrote (not yet in `recorded`). */
    wroteAhead?: readonly string[];
  }): void {
    const internal = (svc: Service): boolean =>
      svc.metadata.namespace === p.operatorNamespace && svc.metadata.labels?.[ROLE_LABEL] === ROLE_INTERNAL;
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
        if (out.deleted.metadata.uid) deleted.add(out.deleted.metadata.uid);
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
      absentSince: this.absentSince,
      now: p.now,
    });
    this.absentSince = change.absentSince;
    const intents = resolvedIntents({
      intents: new Set([...p.recorded.intents, ...(p.wroteAhead ?? [])]),
      present: presentByKey,
      trusted: trustedAfter,
      operatorNamespace: p.operatorNamespace,
      absentSince: this.intentAbsentSince,
      now: p.now,
    });
    this.intentAbsentSince = intents.absentSince;
    if (p.leader && (change.changed || intents.remove.length > 0))
      this.writer?.recordInternalServices({ ...change, removeIntents: intents.remove });
  }
}
