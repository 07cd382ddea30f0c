import type { Logger } from '../log/logger.js';
import { PASS, type QueueOp, type WorkItem } from './decide/work-items.js';
import type { ControllerQueue } from './queue.js';

/** What one reconcile of a work item returns: the queue calls it asks for, and a pass's failure. */
export interface ReconcileResult {
  queue: readonly QueueOp[];
  /** The pass threw (not aborted): it is retried with the pass backoff. */
  error?: unknown;
}

/** What the runner drives: the Reconciler (reconciler.ts). */
export interface Reconcile {
  /** A pass taken now would run (the caches are synced): the queue counts its coalescing window from now. */
  readonly readyToPass: boolean;
  reconcile(item: WorkItem, signal: AbortSignal): Promise<ReconcileResult>;
}

/**
 * The worker loop, and the only code that calls the work queue on the reconciler's behalf (as
 * controller-runtime's `reconcileHandler`): get an item, reconcile it, make the queue calls the
 * reconcile returned, then forget a pass that succeeded or requeue one that threw with backoff,
 * and mark the item done. `workers` loops run until `signal` aborts, which shuts the queue down.
 */
export async function runReconcileWorkers(p: {
  reconciler: Reconcile;
  queue: ControllerQueue;
  log: Logger;
  signal: AbortSignal;
  workers: number;
}): Promise<void> {
  const { queue, signal } = p;
  if (signal.aborted) return;
  signal.addEventListener('abort', () => queue.shutDown(), { once: true });
  const worker = async (): Promise<void> => {
    for (let item = await queue.get(); item !== undefined; item = await queue.get()) {
      try {
        await handle(p, item);
      } finally {
        queue.done(item);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(2, p.workers) }, worker));
}

async function handle(
  p: { reconciler: Reconcile; queue: ControllerQueue; log: Logger; signal: AbortSignal },
  item: WorkItem,
): Promise<void> {
  const { queue, log, signal } = p;
  if (item === PASS && p.reconciler.readyToPass) queue.passStarted();
  const result = await p.reconciler.reconcile(item, signal);
  applyQueueOps(queue, log, result.queue);
  if (item !== PASS) return;
  if (!('error' in result)) {
    queue.forget(PASS);
    return;
  }
  if (signal.aborted) return;
  const retryInMs = queue.addRateLimited(PASS);
  const { error } = result;
  log.error(
    { error: error instanceof Error ? error.stack : String(error), retryInMs },
    'reconcile pass failed',
  );
}

/** Makes the queue calls in order; a requeue's log line gets the delay the queue chose. */
export function applyQueueOps(queue: ControllerQueue, log: Logger, ops: readonly QueueOp[]): void {
  for (const o of ops) {
    switch (o.op) {
      case 'add':
        queue.add(o.item);
        break;
      case 'addAfter':
        queue.addAfter(o.item, o.delayMs);
        break;
      case 'forget':
        queue.forget(o.item);
        break;
      case 'requestPass':
        queue.requestPass();
        break;
      case 'addRateLimited': {
        const retryInMs = queue.addRateLimited(o.item);
        if (!o.log) break;
        const { level, fields, msg, requeues } = o.log;
        const failures = requeues ? { failures: queue.numRequeues(o.item) } : {};
        log[level]({ ...fields, ...failures, retryInMs }, msg);
        break;
      }
    }
  }
}
