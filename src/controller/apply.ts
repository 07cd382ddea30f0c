import { isOwnedBy, type InstallIdentity } from '../binding/ownership/index.js';
import { writeOwnedFields } from '../binding/plan.js';
import type { PlanAction } from '../binding/types.js';
import type { ApplyOutcome } from './decide/outcome.js';
import {
  classifyError,
  isAlreadyExists,
  isConflict,
  isNotFound,
  kinds,
  retryOnConflict,
  type KubeClient,
  type Service,
} from '../kube/index.js';

/** The part of the Kubernetes API the writer uses: Services, one at a time. */
export interface ServiceApi {
  /** The Service, or undefined on 404. */
  get(namespace: string, name: string, signal?: AbortSignal): Promise<Service | undefined>;
  create(svc: Service, signal?: AbortSignal): Promise<Service>;
  /** PUT with `svc.metadata.resourceVersion` as the precondition (409 Conflict when stale). */
  replace(svc: Service, signal?: AbortSignal): Promise<Service>;
  /** DELETE with a uid precondition (409 Conflict when the name holds another object); false on 404. */
  delete(namespace: string, name: string, uid: string | undefined, signal?: AbortSignal): Promise<boolean>;
}

export function serviceApi(client: KubeClient): ServiceApi {
  const sig = (signal?: AbortSignal) => (signal ? { signal } : {});
  return {
    get: (namespace, name, signal) => client.get(kinds.service, namespace, name, sig(signal)),
    create: (svc, signal) => client.create(kinds.service, svc, sig(signal)),
    replace: (svc, signal) => client.replace(kinds.service, svc, sig(signal)),
    delete: (namespace, name, uid, signal) =>
      client.deleteIfExists(kinds.service, namespace, name, { ...sig(signal), ...(uid ? { uid } : {}) }),
  };
}

/** What became of one planned write (decide/outcome.ts). */
export type { ApplyOutcome } from './decide/outcome.js';

export type WriteOp = 'create' | 'update' | 'delete';

export interface ApplyContext {
  api: ServiceApi;
  identity: InstallIdentity;
  /** Checked immediately before every write. */
  isLeader: () => boolean;
  /** Every request that writes, with its result (`ok`, `conflict`, `already_exists`, …), for metrics. */
  onWrite?: (op: WriteOp, result: string) => void;
  signal?: AbortSignal;
}

/** A 409 on update: re-read and retry this many times in all before giving up (with backoff). */
const CONFLICT_ATTEMPTS = 4;

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function writeResult(err: unknown): string {
  if (isConflict(err)) return 'conflict';
  if (isAlreadyExists(err)) return 'already_exists';
  const kind = classifyError(err);
  return kind === 'auth' ? 'forbidden' : kind === 'not_found' ? 'not_found' : 'error';
}

/** Internal: the ladder ended on a foreign holder or without leadership. */
class Stop extends Error {
  constructor(readonly result: 'foreign' | 'skipped') {
    super(result);
  }
}

/**
 * Carries out one planned write and says what became of it. Ownership is checked on the live
 * object before any update or delete; a create that finds the name taken reads the holder:
 * ours (a lagging cache) becomes an update, anyone else's is reported `foreign` and left alone.
 */
export async function applyAction(action: PlanAction, ctx: ApplyContext): Promise<ApplyOutcome> {
  const { key } = action;
  const { api, signal } = ctx;
  const counted = async <T>(op: WriteOp, write: () => Promise<T>): Promise<T> => {
    if (!ctx.isLeader()) throw new Stop('skipped');
    try {
      const out = await write();
      ctx.onWrite?.(op, 'ok');
      return out;
    } catch (err) {
      ctx.onWrite?.(op, writeResult(err));
      throw err;
    }
  };

  /** Update with the live resourceVersion; a 409 re-reads; gone in between → create. */
  const update = (desired: Service, live: Service): Promise<ApplyOutcome> =>
    retryOnConflict(
      async (n) => {
        const current = n === 0 ? live : await api.get(live.metadata.namespace!, live.metadata.name, signal);
        if (!current) return create(desired);
        if (!isOwnedBy(current, ctx.identity)) throw new Stop('foreign');
        try {
          const object = await counted('update', () =>
            api.replace(writeOwnedFields(desired, current), signal),
          );
          return { key, action, result: 'updated', object };
        } catch (err) {
          if (isNotFound(err)) return create(desired);
          throw err;
        }
      },
      { attempts: CONFLICT_ATTEMPTS },
    );

  /** Create; AlreadyExists reads the holder (deleted in between: create once more). */
  const create = async (desired: Service, again = true): Promise<ApplyOutcome> => {
    try {
      const object = await counted('create', () => api.create(desired, signal));
      return { key, action, result: 'created', object };
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
    }
    const holder = await api.get(desired.metadata.namespace!, desired.metadata.name, signal);
    if (!holder) {
      if (again) return create(desired, false);
      return {
        key,
        action,
        result: 'conflict',
        message: 'the Service kept changing while it was being created',
      };
    }
    if (!isOwnedBy(holder, ctx.identity)) throw new Stop('foreign');
    const out = await update(desired, holder);
    // Found ours already there: the cache lagged. What we wrote is still a create to the reader.
    return out.result === 'updated' ? { ...out, result: 'created' } : out;
  };

  /** Delete with the uid precondition; a 409 means the name holds another object now. */
  const remove = async (live: Service): Promise<void> => {
    if (!isOwnedBy(live, ctx.identity)) throw new Stop('foreign');
    await counted('delete', () =>
      api.delete(live.metadata.namespace!, live.metadata.name, live.metadata.uid, signal),
    );
  };

  let deletedFirst: Service | undefined;
  try {
    switch (action.op) {
      case 'create':
        return await create(action.desired);
      case 'update':
        return await update(action.desired, action.object);
      case 'recreate':
        await remove(action.live);
        deletedFirst = action.live;
        return await create(action.desired);
      case 'delete':
        await remove(action.live);
        return { key, action, result: 'deleted', deleted: action.live };
    }
  } catch (err) {
    const first = deletedFirst ? { deletedFirst } : {};
    if (err instanceof Stop) return { key, action, result: err.result, ...first };
    if (isConflict(err)) {
      const what =
        action.op === 'delete' || (action.op === 'recreate' && !deletedFirst)
          ? 'the Service was replaced by another object before it could be deleted'
          : 'the Service kept changing while it was being updated';
      return { key, action, result: 'conflict', message: what, ...first };
    }
    return { key, action, result: 'failed', message: message(err), error: err, ...first };
  }
}

/**
 * Applies actions with at most `concurrency` in flight; resolves with every outcome, in order.
 * `onApplied` is told after each action (for progress lines).
 */
export async function applyAll(
  actions: readonly PlanAction[],
  ctx: ApplyContext,
  concurrency: number,
  onApplied?: () => void,
): Promise<ApplyOutcome[]> {
  const out: ApplyOutcome[] = new Array<ApplyOutcome>(actions.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < actions.length) {
      const i = next++;
      out[i] = await applyAction(actions[i]!, ctx);
      onApplied?.();
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, actions.length) }, worker));
  return out;
}
