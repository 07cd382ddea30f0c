import { request } from 'undici';
import { StatusDocumentSchema, type StatusDocument } from '../controller/decide/status.js';
import { fail, pass, skipped, type CheckResult } from './result.js';

/**
 * The controllers' own view (issue #29 item 3): check reads each replica's /status and judges
 * the leader's, so its errors, its held deletes and why it is not ready reach the person running
 * check, not only the rights and the Lease around it.
 */

export interface ControllerAnswer {
  /** Where it was read (a URL, or a pod's name). */
  from: string;
  doc?: StatusDocument;
  error?: string;
}

export const CONTROLLER_STATUS_ID = 'controllers.status';
const TITLE = "the leading controller's /status: ready, no endpoint in error";

/** The line for what the replicas answered. Pure. */
export function controllerStatusCheck(answers: readonly ControllerAnswer[]): CheckResult {
  const read = answers.filter((a): a is ControllerAnswer & { doc: StatusDocument } => a.doc !== undefined);
  if (answers.length === 0)
    return skipped(
      CONTROLLER_STATUS_ID,
      TITLE,
      'no controller to ask: no controller pod found, and no --controller-url given',
    );
  if (read.length === 0)
    return fail(
      CONTROLLER_STATUS_ID,
      TITLE,
      `no controller answered (${answers.map((a) => `${a.from}: ${a.error ?? 'no answer'}`).join('; ')}); run check in the controller's pod (kubectl exec), or pass --controller-url`,
    );
  const leader = read.find((a) => a.doc.leader);
  if (!leader) {
    const holder = read.find((a) => a.doc.leadership?.holder)?.doc.leadership?.holder;
    const cannot = read.flatMap((a) => a.doc.leadership?.cannotLead ?? []);
    return fail(
      CONTROLLER_STATUS_ID,
      TITLE,
      `none of the ${read.length} replicas read leads (Lease holder: ${holder ?? 'nobody'})${cannot.length ? `; cannot lead: ${cannot.join('; ')}` : ''}; kubectl -n <ns> logs deploy/<release>-controller`,
    );
  }
  const doc = leader.doc;
  const problems: string[] = [];
  if (!doc.ready)
    problems.push(...(doc.notReadyReasons ?? ['not ready (no reason given)']).map((r) => `not ready: ${r}`));
  const errors = doc.endpoints.filter((e) => e.state === 'error');
  for (const e of errors.slice(0, 5)) problems.push(`endpoint ${e.id} (${e.url}) in error: ${e.reason}`);
  if (errors.length > 5) problems.push(`… and ${errors.length - 5} more endpoints in error`);
  const held = doc.deleting ?? [];
  const heldNote = held.length
    ? `${held.length} delete${held.length === 1 ? '' : 's'} waiting: ${held
        .slice(0, 3)
        .map((d) => `${d.namespace}/${d.name} (${d.reason})`)
        .join('; ')}`
    : undefined;
  if (problems.length === 0) {
    const ok = pass(CONTROLLER_STATUS_ID, `${TITLE} (leader read at ${leader.from})`);
    return heldNote ? { ...ok, hint: heldNote } : ok;
  }
  return fail(
    CONTROLLER_STATUS_ID,
    `${TITLE} (leader read at ${leader.from})`,
    `the leader reports the problems above${heldNote ? `; ${heldNote}` : ''}; endpoint-binder status on the leader lists every endpoint`,
    problems,
  );
}

/** One replica's /status, read directly from its HTTP server. */
export async function readControllerStatus(url: string, timeoutMs: number): Promise<ControllerAnswer> {
  const target = `${url.replace(/\/$/, '')}/status`;
  try {
    const res = await request(target, { headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
    const text = await res.body.text();
    if (res.statusCode === 404)
      return { from: url, error: 'answers 404 on /status: still in preflight (not registered yet)' };
    if (res.statusCode !== 200) return { from: url, error: `HTTP ${res.statusCode}` };
    const doc = StatusDocumentSchema.safeParse(JSON.parse(text));
    return doc.success
      ? { from: url, doc: doc.data }
      : { from: url, error: 'did not answer a status document' };
  } catch (err) {
    return { from: url, error: err instanceof Error ? err.message : String(err) };
  }
}
