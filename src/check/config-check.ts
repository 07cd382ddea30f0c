import { fail, pass, type CheckResult } from './result.js';

/** The settings reader's verdict: valid, or every problem; `sources` names where settings came from. */
export type SettingsVerdict =
  { ok: true; sources: string } | { ok: false; problems: string[]; sources: string };

/** The `config` check from the settings reader's verdict. Pure. */
export function configCheck(r: SettingsVerdict): CheckResult {
  const title = `config valid (${r.sources})`;
  if (r.ok) return pass('config', title);
  return fail(
    'config',
    title,
    `fix ${r.problems.length === 1 ? 'the problem above' : `the ${r.problems.length} problems above`}; \`endpoint-binder controller --help\` lists every field`,
    r.problems,
  );
}
