import type { PlanAction } from '../../binding/types.js';
import type { Service } from '../../kube/objects.js';

/**
 * What became of one planned write. The writer only reports; the reconciler records.
 * `deletedFirst`: a recreate deleted the live object before what followed.
 */
export type ApplyOutcome =
  | { key: string; action: PlanAction; result: 'created' | 'updated'; object: Service }
  | { key: string; action: PlanAction; result: 'deleted'; deleted: Service }
  /** The name is held by a Service that is not this install's: never touched. */
  | { key: string; action: PlanAction; result: 'foreign'; deletedFirst?: Service }
  /** The object kept changing under us (409s past the retries, or a uid precondition failed). */
  | { key: string; action: PlanAction; result: 'conflict'; message: string; deletedFirst?: Service }
  | {
      key: string;
      action: PlanAction;
      result: 'failed';
      message: string;
      error: unknown;
      deletedFirst?: Service;
    }
  /** Not the leader at the instant of the write: nothing written. */
  | { key: string; action: PlanAction; result: 'skipped'; deletedFirst?: Service };
