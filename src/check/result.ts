/**
 * One fact `endpoint-binder check` verified, and how it is shown. Pure: probes produce these,
 * the formatter prints them, the exit code follows from them.
 */
export type CheckStatus = 'ok' | 'fail' | 'skipped';

export interface CheckResult {
  /** Stable identifier (`config`, `api.reachable`, `cluster.rbac.create-services`, ...). */
  id: string;
  /** The fact, phrased as true: `config valid`, `operator namespace "ops" exists`. */
  title: string;
  status: CheckStatus;
  /** For a failure: one line naming the cause and the fix. For a skip: which check it depends on. */
  hint?: string;
  /** Every individual problem (for `config`: one per bad field), each shown on its own line. */
  problems?: string[];
}

export const pass = (id: string, title: string): CheckResult => ({ id, title, status: 'ok' });

export const fail = (id: string, title: string, hint: string, problems?: string[]): CheckResult => ({
  id,
  title,
  status: 'fail',
  hint,
  ...(problems && problems.length > 0 ? { problems } : {}),
});

export const skipped = (id: string, title: string, because: string): CheckResult => ({
  id,
  title,
  status: 'skipped',
  hint: `not checked: ${because}`,
});

/** 0 only when every check ran and passed. */
export function checksExitCode(results: readonly CheckResult[]): 0 | 1 {
  return results.length > 0 && results.every((r) => r.status === 'ok') ? 0 : 1;
}

const MARK: Record<CheckStatus, string> = { ok: '✓', fail: '✗', skipped: '-' };

/** The human report: a ✓/✗ line per fact, the hint and every problem indented under a ✗, a summary. */
export function formatChecks(results: readonly CheckResult[]): string {
  const lines: string[] = [];
  for (const r of results) {
    lines.push(`${MARK[r.status]} ${r.title}`);
    for (const p of r.problems ?? []) {
      const [first, ...rest] = p.split('\n').filter((l) => l.trim().length > 0);
      lines.push(`    ${first}`, ...rest.map((l) => `      ${l}`));
    }
    if (r.hint) lines.push(`    ${r.status === 'fail' ? 'hint: ' : ''}${r.hint}`);
  }
  const failed = results.filter((r) => r.status === 'fail').length;
  const skippedCount = results.filter((r) => r.status === 'skipped').length;
  lines.push('', summaryLine(results.length, failed, skippedCount));
  return lines.join('\n') + '\n';
}

/**
 * The last line, in agreement with the exit code: 0 only when every check ran and passed, so a
 * line that was not run is said to leave the install unproven (not "0 failed").
 */
export function summaryLine(total: number, failed: number, notRun: number): string {
  if (failed === 0 && notRun === 0) return `All ${total} checks passed.`;
  const unrun = `${notRun} of ${total} checks not run (each - line says why)`;
  if (failed === 0) return `${unrun}, so not every fact is known to hold: exit code 1.`;
  return `${failed} of ${total} checks failed${notRun ? `; ${unrun}` : ''}: exit code 1.`;
}

/** The `-o json` document. */
export function checksDocument(results: readonly CheckResult[]): { ok: boolean; checks: CheckResult[] } {
  return { ok: checksExitCode(results) === 0, checks: [...results] };
}
