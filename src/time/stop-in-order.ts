/**
 * A process root's stop sequence as a declared list of named steps. The list is the order (a
 * test compares it with the documented one); every step runs even when an earlier one threw,
 * because a failed flush must not leave the lease held or the HTTP server open.
 */

/** What happened: the steps in the order they ran, and each failure under its step's name. */
export interface StopReport<N extends string> {
  ran: N[];
  errors: { step: N; error: Error }[];
}

/** Runs `steps[name]` for each name of `order`, one after another, awaiting each. */
export async function stopInOrder<N extends string>(
  order: readonly N[],
  steps: Record<N, () => unknown>,
): Promise<StopReport<N>> {
  const report: StopReport<N> = { ran: [], errors: [] };
  for (const step of order) {
    report.ran.push(step);
    try {
      await steps[step]();
    } catch (err) {
      report.errors.push({ step, error: err instanceof Error ? err : new Error(String(err)) });
    }
  }
  return report;
}

/** Rejects after the whole sequence when a step failed, naming each failed step and why. */
export function throwIfStepFailed<N extends string>(report: StopReport<N>): void {
  if (report.errors.length === 0) return;
  const named = report.errors.map(({ step, error }) => `${step}: ${error.message}`).join('; ');
  throw new AggregateError(
    report.errors.map((e) => e.error),
    `stop steps failed: ${named}`,
  );
}
