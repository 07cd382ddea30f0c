import { isOwnedBy, type InstallIdentity } from '../binding/identity.js';
import { writeOwnedFields } from '../binding/plan.js';
import type { PlanAction } from '../binding/types.js';
import {
  classifyError,
  isAlreadyExists,
  isConflict,
  isNotFound,
  kinds,
  type KubeClient,
  type Service,
} from '../kube/index.js';
import type { ClusterState } from './cluster.js';
import type { ControllerMetrics } from './metrics.js';

export type ApplyOutcome =
  | { key: string; op: PlanAction['op']; result: 'ok'; object: Service | null }
  /** The name is held by a Service that is not this install's: never touched. */
  | { key: string; op: PlanAction['op']; result: 'foreign' }
  /** Not leader any more at the instant of the write: nothing written. */
  | { key: string; op: PlanAction['op']; result: 'skipped' }
  | { key: string; op: PlanAction['op']; result: 'error'; message: string };

export interface ApplyContext {
  client: KubeClient;
  cluster: ClusterState;
  identity: InstallIdentity;
  /** Checked immediately before every write. */
  isLeader: () => boolean;
  metrics: ControllerMetrics;
  now: () => number;
  signal?: AbortSignal;
}

const MAX_CONFLICT_RETRIES = 3;

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function writeResult(err: unknown): string {
  if (isConflict(err)) return 'conflict';
  if (isAlreadyExists(err)) return 'already_exists';
  const kind = classifyError(err);
  return kind === 'auth' ? 'forbidden' : kind === 'not_found' ? 'not_found' : 'error';
}

/**
 * Carries out one action. Ownership is checked on the live object before any update or
 * delete; a create that finds the name taken reads the holder and, when it is not ours,
 * records it as foreign instead of overwriting it.
 */
export async function applyAction(action: PlanAction, ctx: ApplyContext): Promise<ApplyOutcome> {
  const { key, op } = action;
  const sig = ctx.signal ? { signal: ctx.signal } : {};
  const m = ctx.metrics;
  const guard = (): boolean => ctx.isLeader();

  const create = async (desired: Service): Promise<ApplyOutcome> => {
    for (let attempt = 0; attempt <= MAX_CONFLICT_RETRIES; attempt++) {
      if (!guard()) return { key, op, result: 'skipped' };
      try {
        const created = await ctx.client.create(kinds.service, desired, sig);
        m.kubeWrites.inc({ op: 'create', result: 'ok' });
        ctx.cluster.wrote(key, created, ctx.now());
        return { key, op, result: 'ok', object: created };
      } catch (err) {
        m.kubeWrites.inc({ op: 'create', result: writeResult(err) });
        if (!isAlreadyExists(err)) throw err;
      }
      const live = await ctx.client.get(
        kinds.service,
        desired.metadata.namespace,
        desired.metadata.name,
        sig,
      );
      if (!live) continue; // deleted in between: create again
      if (!isOwnedBy(live, ctx.identity)) {
        ctx.cluster.markForeign(key, ctx.now());
        return { key, op, result: 'foreign' };
      }
      return update(desired, live);
    }
    return { key, op, result: 'error', message: 'the Service kept changing while it was being created' };
  };

  const update = async (desired: Service, live: Service): Promise<ApplyOutcome> => {
    let current: Service | undefined = live;
    for (let attempt = 0; attempt <= MAX_CONFLICT_RETRIES; attempt++) {
      if (!current) return create(desired);
      if (!isOwnedBy(current, ctx.identity)) {
        ctx.cluster.markForeign(key, ctx.now());
        return { key, op, result: 'foreign' };
      }
      if (!guard()) return { key, op, result: 'skipped' };
      try {
        const next = writeOwnedFields(desired, current);
        const updated = await ctx.client.replace(kinds.service, next, sig);
        m.kubeWrites.inc({ op: 'update', result: 'ok' });
        ctx.cluster.wrote(key, updated, ctx.now());
        return { key, op, result: 'ok', object: updated };
      } catch (err) {
        m.kubeWrites.inc({ op: 'update', result: writeResult(err) });
        if (isNotFound(err)) {
          current = undefined;
          continue;
        }
        if (!isConflict(err)) throw err;
      }
      current = await ctx.client.get(kinds.service, live.metadata.namespace, live.metadata.name, sig);
    }
    ctx.cluster.forget(key);
    return { key, op, result: 'error', message: 'update conflicted repeatedly; retrying later' };
  };

  const remove = async (live: Service): Promise<boolean> => {
    if (!isOwnedBy(live, ctx.identity)) return false;
    if (!guard()) return false;
    try {
      await ctx.client.deleteIfExists(kinds.service, live.metadata.namespace, live.metadata.name, {
        ...sig,
        ...(live.metadata.uid ? { uid: live.metadata.uid } : {}),
      });
      m.kubeWrites.inc({ op: 'delete', result: 'ok' });
      ctx.cluster.wrote(key, null, ctx.now());
      return true;
    } catch (err) {
      m.kubeWrites.inc({ op: 'delete', result: writeResult(err) });
      // A uid precondition failure: the name now holds another object; the next pass decides.
      if (isConflict(err)) {
        ctx.cluster.forget(key);
        return false;
      }
      throw err;
    }
  };

  try {
    switch (action.op) {
      case 'create':
        return await create(action.desired);
      case 'update':
        return await update(action.desired, action.object);
      case 'recreate': {
        if (!guard()) return { key, op, result: 'skipped' };
        await remove(action.live);
        return await create(action.desired);
      }
      case 'delete': {
        if (!guard()) return { key, op, result: 'skipped' };
        const deleted = await remove(action.live);
        return deleted ? { key, op, result: 'ok', object: null } : { key, op, result: 'skipped' };
      }
    }
  } catch (err) {
    ctx.cluster.forget(key);
    return { key, op, result: 'error', message: message(err) };
  }
}

/** Applies actions with at most `concurrency` in flight; resolves with every outcome. */
export async function applyAll(
  actions: readonly PlanAction[],
  ctx: ApplyContext,
  concurrency: number,
): Promise<ApplyOutcome[]> {
  const out: ApplyOutcome[] = new Array<ApplyOutcome>(actions.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < actions.length) {
      const i = next++;
      out[i] = await applyAction(actions[i]!, ctx);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, actions.length) }, worker));
  return out;
}
