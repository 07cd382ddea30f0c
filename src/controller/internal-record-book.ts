import {
  ownershipAfterPass,
  recordedOwnershipOf,
  type InstallIdentity,
  type InternalServicesChange,
  type OwnershipRecord,
} from '../binding/ownership/index.js';
import type { ConfigMap, Service } from '../kube/index.js';
import type { Logger } from '../log/logger.js';
import type { ApplyOutcome } from './apply.js';

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
    const { change, removeIntents, intentAbsentSince } = ownershipAfterPass({
      ...p,
      absentSince: this.absentSince,
      intentAbsentSince: this.intentAbsentSince,
    });
    this.absentSince = change.absentSince;
    this.intentAbsentSince = intentAbsentSince;
    if (p.leader && (change.changed || removeIntents.length > 0))
      this.writer?.recordInternalServices({ ...change, removeIntents });
  }
}
