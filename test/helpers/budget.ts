import { availableParallelism, loadavg } from 'node:os';

/**
 * One factor for every wall-clock budget the tests give a child process or a server (a line to
 * print, a port to open, a condition to hold): `budget(ms)` is `ms` times this factor.
 *
 * `TEST_TIME_FACTOR` sets it (a number > 0). Unset, it is derived once from the machine at start:
 * the load average per core (the larger of the 1- and 5-minute figures), never below 1 and at most
 * 8 — so a quiet 2-core machine keeps the written budgets and one at a load average of 10 gets five
 * times each. vitest.config.ts computes it once and hands it to every worker through the
 * environment, so one run uses one factor. A budget is a bound on failure, never a speed claim: a
 * test passes as soon as its condition holds.
 */
export const TEST_TIME_FACTOR_ENV = 'TEST_TIME_FACTOR';

const DERIVED_MAX = 8;

/** The factor a run would use with this environment and this machine's load (pure; exported for tests). */
export function timeFactorFrom(
  env: Record<string, string | undefined>,
  load: readonly number[],
  cores: number,
): number {
  const set = env[TEST_TIME_FACTOR_ENV];
  if (set !== undefined && set.trim() !== '') {
    const n = Number(set);
    if (!Number.isFinite(n) || n <= 0)
      throw new Error(`${TEST_TIME_FACTOR_ENV}=${set} is not a positive number; unset it or set e.g. 5`);
    return n;
  }
  const perCore = Math.max(load[0] ?? 0, load[1] ?? 0) / Math.max(1, cores);
  return Math.round(Math.min(DERIVED_MAX, Math.max(1, perCore)) * 10) / 10;
}

let cached: number | undefined;

/** This run's factor (from `TEST_TIME_FACTOR`, else from the load average at the first call). */
export function timeFactor(): number {
  cached ??= timeFactorFrom(process.env, loadavg(), availableParallelism());
  return cached;
}

/** `ms` scaled by the run's factor: the budget for a wait on a child process or a server. */
export function budget(ms: number): number {
  return Math.ceil(ms * timeFactor());
}
