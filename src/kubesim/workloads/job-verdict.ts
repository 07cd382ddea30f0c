/**
 * What the Job controller does next for one Job, from what it observes of the Job's pods (pure).
 * One pod at a time (parallelism 1, completions 1: what hook Jobs use).
 */

export interface JobPodView {
  name: string;
  /** The pod's status.phase (Pending before the kubelet has written one). */
  phase: string;
  terminating: boolean;
  /** When its container finished, for the retry delay. */
  finishedMs?: number | undefined;
}

export type JobVerdict =
  | { kind: 'done' }
  | { kind: 'complete' }
  | { kind: 'failed'; reason: string; message: string; deletePods: string[] }
  | { kind: 'create'; deadlineInMs?: number }
  | { kind: 'wait'; retryInMs?: number; deadlineInMs?: number };

export function jobVerdict(input: {
  finished: boolean;
  backoffLimit: number;
  deadlineMs?: number;
  pods: readonly JobPodView[];
  nowMs: number;
  retryDelayMs: (failures: number) => number;
}): JobVerdict {
  if (input.finished) return { kind: 'done' };
  const { pods, nowMs } = input;
  if (pods.some((p) => p.phase === 'Succeeded')) return { kind: 'complete' };
  const running = pods.filter((p) => !p.terminating && p.phase !== 'Succeeded' && p.phase !== 'Failed');
  const failures = pods.filter((p) => p.phase === 'Failed');
  if (failures.length > input.backoffLimit)
    return {
      kind: 'failed',
      reason: 'BackoffLimitExceeded',
      message: 'Job has reached the specified backoff limit',
      deletePods: running.map((p) => p.name),
    };
  const deadlineInMs = input.deadlineMs !== undefined ? input.deadlineMs - nowMs : undefined;
  if (deadlineInMs !== undefined && deadlineInMs <= 0)
    return {
      kind: 'failed',
      reason: 'DeadlineExceeded',
      message: 'Job was active longer than specified deadline',
      deletePods: running.map((p) => p.name),
    };
  const deadline = deadlineInMs !== undefined ? { deadlineInMs } : {};
  if (running.length > 0 || pods.some((p) => p.terminating)) return { kind: 'wait', ...deadline };
  const lastFailure = Math.max(0, ...failures.map((p) => p.finishedMs ?? 0));
  const retryAt = failures.length ? lastFailure + input.retryDelayMs(failures.length) : nowMs;
  if (retryAt > nowMs) return { kind: 'wait', retryInMs: retryAt - nowMs, ...deadline };
  return { kind: 'create', ...deadline };
}
