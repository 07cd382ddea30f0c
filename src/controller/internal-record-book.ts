import type { RecordedInternal } from '../binding/anchors.js';
import type { InstallIdentity } from '../binding/identity.js';
import { ROLE_INTERNAL, ROLE_LABEL } from '../binding/identity.js';
import { recordedInternalOf } from '../binding/install-record.js';
import { recordedInternalChange } from '../binding/recorded-internal.js';
import type { ConfigMap, Service } from '../kube/index.js';
import type { Logger } from '../log/logger.js';
import type { ApplyOutcome } from './apply.js';
import type { InternalServicesChange } from './install-record-writer.js';

/**
 * The reconciler's side of the install record's list of internal Services: reading the list
 * (a malformed one reported once per value) and deciding, after each pass, what the leader adds
 * and removes. Every replica tracks how long listed uids have been absent, so a new leader
 * prunes on time (docs/projection.md "Install record").
 */
export class InternalRecordBook {
  private absentSince = new Map<string, number>();
  private lastProblem: string | undefined;
  private lastRead:
    | {
        record: ConfigMap | undefined;
        identity: InstallIdentity;
        result: { uids: ReadonlySet<string> | undefined; problem?: string };
      }
    | undefined;

  constructor(
    private readonly log: Logger,
    private readonly writer: { recordInternalServices(change: InternalServicesChange): void } | undefined,
  ) {}

  /**
   * The list (undefined: no record yet, every labelled internal Service counts). A malformed list
   * is read as none, so the leader lists what is there again rather than distrusting its own
   * Services (docs/projection.md "Ownership").
   */
  read(record: ConfigMap | undefined, identity: InstallIdentity): RecordedInternal {
    // The cache hands out the same object until the record changes; parsing 20,000 uids every
    // pass is most of this function's cost, so one parse per object and identity.
    const memo = this.lastRead;
    const { uids, problem } =
      memo && memo.record === record && memo.identity === identity
        ? memo.result
        : recordedInternalOf(record, identity);
    this.lastRead = { record, identity, result: { uids, ...(problem !== undefined ? { problem } : {}) } };
    if (problem !== undefined && this.lastProblem !== problem)
      this.log.error({ error: problem }, 'install record internal-services not read');
    this.lastProblem = problem;
    return uids;
  }

  /**
   * After a pass: list every internal Service trusted or just created, unlist the ones deleted or
   * gone a while. One write per pass that changes the list, at most (the writer batches); only
   * the leader writes.
   */
  afterPass(p: {
    leader: boolean;
    now: number;
    operatorNamespace: string;
    owned: Iterable<Service>;
    trusted: readonly Service[];
    outcomes: readonly ApplyOutcome[];
    recorded: RecordedInternal;
  }): void {
    const internal = (svc: Service): boolean =>
      svc.metadata.namespace === p.operatorNamespace && svc.metadata.labels?.[ROLE_LABEL] === ROLE_INTERNAL;
    const present = new Set<string>();
    for (const svc of p.owned) if (internal(svc) && svc.metadata.uid) present.add(svc.metadata.uid);
    const trusted = new Set<string>();
    for (const svc of p.trusted) if (internal(svc) && svc.metadata.uid) trusted.add(svc.metadata.uid);
    const deleted = new Set<string>();
    for (const out of p.outcomes) {
      if (out.result === 'deleted' && out.deleted.metadata.uid) deleted.add(out.deleted.metadata.uid);
      if (
        (out.result === 'created' || out.result === 'updated') &&
        internal(out.object) &&
        out.object.metadata.uid
      ) {
        trusted.add(out.object.metadata.uid);
        present.add(out.object.metadata.uid);
      }
    }
    const change = recordedInternalChange({
      recorded: p.recorded,
      present,
      trusted,
      deleted,
      absentSince: this.absentSince,
      now: p.now,
    });
    this.absentSince = change.absentSince;
    if (p.leader && change.changed) this.writer?.recordInternalServices(change);
  }
}
