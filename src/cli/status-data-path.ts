/**
 * The data-path column of `endpoint-binder status`: what the forwarders observed of each
 * endpoint's last connections, read from each forwarder's `/status`. The merge is pure; the read
 * is a thin adapter. Every forwarder replica observes its own clients, so the newest observation
 * of any of them is shown, aged on that forwarder's own clock.
 */
import { request } from 'undici';
import { ForwarderStatusSchema, type ForwarderStatus } from '../forwarder/forwarder-status.js';

export type ForwarderAnswer =
  { url: string; ok: true; status: ForwarderStatus } | { url: string; ok: false; problem: string };

export interface DataPathView {
  /** The cell per endpoint id. */
  cells: Map<string, string>;
  /** Lines for the header: forwarders that could not be read. */
  notes: string[];
}

interface Candidate {
  text: string;
  /** Milliseconds since the newest event; Infinity for `no traffic yet`. */
  age: number;
}

function newestEvent(row: ForwarderStatus['urls'][number], now: number): number {
  const times = [row.lastSuccessAt, row.lastFailure?.at].filter((t): t is string => t !== undefined);
  return times.length ? now - Math.max(...times.map((t) => Date.parse(t))) : Infinity;
}

/** Pure: one cell per endpoint, matched to forwarder rows by forwarder port (the target port), else by URL. */
export function dataPathView(
  endpoints: readonly { id: string; url: string; targetPort?: number | undefined }[],
  answers: readonly ForwarderAnswer[],
): DataPathView {
  const notes = answers
    .filter((a): a is Extract<ForwarderAnswer, { ok: false }> => !a.ok)
    .map((a) => `data path: cannot read forwarder ${a.url}: ${a.problem}`);
  const read = answers.filter((a): a is Extract<ForwarderAnswer, { ok: true }> => a.ok);
  const cells = new Map<string, string>();
  for (const e of endpoints) {
    if (read.length === 0) {
      cells.set(e.id, 'unknown (no forwarder read)');
      continue;
    }
    let best: Candidate | undefined;
    for (const a of read) {
      const now = Date.parse(a.status.now);
      const row =
        a.status.urls.find((r) => e.targetPort !== undefined && r.port === e.targetPort) ??
        a.status.urls.find((r) => r.url === e.url);
      if (!row) continue;
      const c = { text: row.dataPath, age: newestEvent(row, now) };
      if (!best || c.age < best.age) best = c;
    }
    cells.set(e.id, best?.text ?? 'not served by the forwarders read');
  }
  return { cells, notes };
}

/** Reads one forwarder's `/status`; never throws (a failure is an answer naming the cause). */
export async function readForwarderStatus(base: string, timeoutMs = 5_000): Promise<ForwarderAnswer> {
  const url = `${base.replace(/\/$/, '')}/status`;
  try {
    const res = await request(url, { headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
    const text = await res.body.text();
    if (res.statusCode !== 200) return { url, ok: false, problem: `HTTP ${res.statusCode}` };
    const parsed = ForwarderStatusSchema.safeParse(JSON.parse(text));
    if (!parsed.success)
      return { url, ok: false, problem: 'not a forwarder status document (is it a forwarder HTTP server?)' };
    return { url, ok: true, status: parsed.data };
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    return { url, ok: false, problem: e.code ?? (err instanceof Error ? err.message : String(err)) };
  }
}
