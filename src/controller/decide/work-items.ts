/**
 * The items of the controller's one work queue (queue.ts), and what a reconcile asks the queue
 * to do with them, as plain values: the reconciler returns these and the runner
 * (reconcile-runner.ts) is the only code that calls the queue, as controller-runtime's
 * `reconcileHandler` turns a returned `Result` into queue calls.
 *
 * - `pass`: the world changed (an endpoint, a Service or Namespace event, leadership); one
 *   reconcile pass follows. Cluster events add it with a short delay (`requestPass`), so a burst
 *   of them is one pass; endpoint changes add it at once.
 * - `read:<namespace>/<name>`: find out again who holds a Service name the projection asked
 *   about, with backoff, while a foreign Service holds it or its read failed (the first read of a
 *   name happens inside the pass, before the plan).
 * - `retry:<namespace>/<name>`: a Service whose write failed has waited out its backoff.
 */
export type WorkItem = 'pass' | `read:${string}` | `retry:${string}`;

export const PASS: WorkItem = 'pass';
export const readItem = (key: string): WorkItem => `read:${key}`;
export const retryItem = (key: string): WorkItem => `retry:${key}`;

export type ParsedItem = { kind: 'pass' } | { kind: 'read' | 'retry'; key: string };

export function parseItem(item: WorkItem): ParsedItem {
  if (item === PASS) return { kind: 'pass' };
  const colon = item.indexOf(':');
  const kind = item.slice(0, colon);
  const rest = item.slice(colon + 1);
  return { kind: kind === 'read' ? 'read' : 'retry', key: rest };
}

/** One line for the controller's log, decided here and written by the shell. */
export interface LogLine {
  level: 'debug' | 'info' | 'warn' | 'error';
  fields: Record<string, unknown>;
  msg: string;
}

/**
 * One call on the work queue. `addRateLimited` may carry the log line that says why: the runner
 * writes it with the delay the queue chose (`retryInMs`) and, with `requeues`, how many times the
 * item has been requeued (`failures`).
 */
export type QueueOp =
  | { op: 'add'; item: WorkItem }
  | { op: 'addAfter'; item: WorkItem; delayMs: number }
  | { op: 'addRateLimited'; item: WorkItem; log?: LogLine & { requeues?: true } }
  | { op: 'forget'; item: WorkItem }
  /** A pass after the queue's coalescing window (`ControllerQueue.requestPass`). */
  | { op: 'requestPass' };
