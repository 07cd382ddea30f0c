/**
 * The data-path column of `/status` and `endpoint-binder status` (issue #27 item 5, #29 item 4):
 * what the forwarders observed of each endpoint's last connections, merged. Pure: the gatherer
 * (forwarder-health.ts) and the CLI's `--forwarder-url` override read the forwarders and hand
 * the answers here; everything said about them is decided below.
 *
 * Facts only: a forwarder that could not be read is "unknown" with the reason, never "ok"; when
 * only some forwarders were read, the cell says how many, since an unread one may have seen
 * newer traffic. Every forwarder replica observes its own clients, so the newest observation of
 * any of them is shown, aged on that forwarder's own clock plus the time since it was read.
 */
import { z } from 'zod';
import type { ForwarderStatus, ForwarderUrlStatus } from '../../forwarder/forwarder-status.js';
import { dataPathText, type UrlFailure } from '../../forwarder/url-health.js';

export type ForwarderAnswer = { ok: true; status: ForwarderStatus } | { ok: false; problem: string };

/** One forwarder as last gathered: its name (a pod, or the URL it was asked at) and its answer. */
export interface ForwarderRead {
  name: string;
  /** The `/status` URL asked; absent when there was none to ask (a pod without an IP). */
  url?: string;
  /** The reader's clock (ms) when the answer came. */
  readAt: number;
  answer: ForwarderAnswer;
  /**
   * true: found, but its process does not run (a Pending pod): nothing to read and no connection
   * of it to miss, so it does not count among the forwarders a cell was read from.
   */
  notRunning?: true;
}

export interface DataPathSnapshot {
  /** When this gathering finished (reader's clock, ms). */
  gatheredAt: number;
  /** Why the forwarders could not even be found (the pod list failed), if so. */
  problem?: string;
  forwarders: ForwarderRead[];
}

/** What `/status` says of each forwarder (`dataPath.forwarders`). */
export const ForwarderEntrySchema = z.object({
  name: z.string(),
  url: z.string().optional(),
  /** true: its `/status` was read at the last gathering. */
  read: z.boolean(),
  /** Its own readiness and reasons, when read. */
  ready: z.boolean().optional(),
  reasons: z.array(z.string()).optional(),
  /** Why it could not be read, when not. */
  problem: z.string().optional(),
  /** false: it does not run (a Pending pod), so it carries no connection. */
  running: z.literal(false).optional(),
});
export type ForwarderEntry = z.infer<typeof ForwarderEntrySchema>;

/** The `dataPath` part of the status document. */
export const DataPathDocumentSchema = z.object({
  /** When the forwarders were last gathered (RFC 3339); null before the first gathering. */
  gatheredAt: z.string().nullable(),
  problem: z.string().optional(),
  forwarders: z.array(ForwarderEntrySchema),
});
export type DataPathDocument = z.infer<typeof DataPathDocumentSchema>;

export function dataPathDocument(snap: DataPathSnapshot | undefined): DataPathDocument {
  if (!snap) return { gatheredAt: null, forwarders: [] };
  return {
    gatheredAt: new Date(snap.gatheredAt).toISOString(),
    ...(snap.problem !== undefined ? { problem: snap.problem } : {}),
    forwarders: snap.forwarders.map(forwarderEntry),
  };
}

function forwarderEntry(f: ForwarderRead): ForwarderEntry {
  const where = {
    name: f.name,
    ...(f.url !== undefined ? { url: f.url } : {}),
    ...(f.notRunning ? { running: false as const } : {}),
  };
  return f.answer.ok
    ? { ...where, read: true, ready: f.answer.status.ready, reasons: f.answer.status.reasons }
    : { ...where, read: false, problem: f.answer.problem };
}

/** Header lines for `status`: forwarders not read (unknown, with the reason) or not ready. */
export function dataPathNotes(doc: DataPathDocument): string[] {
  if (doc.problem !== undefined) return [`data path: unknown (${doc.problem})`];
  if (doc.gatheredAt === null) return ['data path: unknown (the forwarders have not been read yet)'];
  return doc.forwarders.flatMap((f) => {
    if (f.running === false)
      return [`data path: forwarder ${f.name} not running (${f.problem ?? 'not read'})`];
    if (!f.read) return [`data path: forwarder ${f.name} unknown (${f.problem ?? 'not read'})`];
    if (f.ready === false)
      return [`data path: forwarder ${f.name} not ready: ${f.reasons?.join('; ') || 'no reason given'}`];
    return [];
  });
}

/** An endpoint as the cell needs it: its forwarder port (the internal Service's targetPort) and URL. */
export interface EndpointRef {
  url: string;
  targetPort?: number | undefined;
}

type ReadForwarder = ForwarderRead & { answer: { ok: true; status: ForwarderStatus } };

interface RowIndex {
  byPort: Map<number, ForwarderUrlStatus>;
  byUrl: Map<string, ForwarderUrlStatus>;
}

/** Rows by port and URL, built once per answer: a cell per endpoint per request stays O(1) per forwarder. */
const indexes = new WeakMap<ForwarderStatus, RowIndex>();

function rowIndex(status: ForwarderStatus): RowIndex {
  let idx = indexes.get(status);
  if (!idx) {
    idx = { byPort: new Map(), byUrl: new Map() };
    for (const row of status.urls) {
      idx.byPort.set(row.port, row);
      idx.byUrl.set(row.url, row);
    }
    indexes.set(status, idx);
  }
  return idx;
}

/** The forwarder's own clock at `now` on the reader's clock: its `now` plus the time since the read. */
function forwarderNow(f: ReadForwarder, now: number): number {
  return Date.parse(f.answer.status.now) + Math.max(0, now - f.readAt);
}

function eventTimes(row: ForwarderUrlStatus): { lastSuccessAt?: number; lastFailure?: UrlFailure } {
  return {
    ...(row.lastSuccessAt !== undefined ? { lastSuccessAt: Date.parse(row.lastSuccessAt) } : {}),
    ...(row.lastFailure ? { lastFailure: { ...row.lastFailure, at: Date.parse(row.lastFailure.at) } } : {}),
  };
}

/** Milliseconds since the row's newest event, on its forwarder's clock; Infinity for none. */
function ageOfNewest(row: ForwarderUrlStatus, fwdNow: number): number {
  const t = eventTimes(row);
  const times = [t.lastSuccessAt, t.lastFailure?.at].filter((x): x is number => x !== undefined);
  return times.length ? fwdNow - Math.max(...times) : Infinity;
}

/** The named checks, in order, that settle a cell before any forwarder row is looked at. */
const beforeRows: {
  name: string;
  cell: (e: EndpointRef, s: DataPathSnapshot | undefined) => string | undefined;
}[] = [
  { name: 'no forwarder port', cell: (e) => (e.targetPort === undefined ? '-' : undefined) },
  {
    name: 'not gathered',
    cell: (_e, s) => (s ? undefined : 'unknown (the forwarders have not been read yet)'),
  },
  {
    name: 'forwarders not found',
    cell: (_e, s) => (s?.problem !== undefined ? `unknown (${s.problem})` : undefined),
  },
  {
    name: 'no forwarder',
    cell: (_e, s) => (s?.forwarders.length === 0 ? 'unknown (no forwarder found)' : undefined),
  },
  {
    name: 'none running',
    cell: (_e, s) => (s?.forwarders.every((f) => f.notRunning) ? 'no forwarder running' : undefined),
  },
  {
    name: 'none read',
    cell: (_e, s) => (s?.forwarders.some((f) => f.answer.ok) ? undefined : 'unknown (no forwarder read)'),
  },
];

/** One endpoint's cell at `now` (the reader's clock). */
export function dataPathCell(e: EndpointRef, snap: DataPathSnapshot | undefined, now: number): string {
  for (const check of beforeRows) {
    const cell = check.cell(e, snap);
    if (cell !== undefined) return cell;
  }
  const all = snap!.forwarders.filter((f) => !f.notRunning);
  const read = all.filter((f): f is ReadForwarder => f.answer.ok);
  const partial = read.length < all.length ? ` (${read.length} of ${all.length} forwarders read)` : '';
  let best: { row: ForwarderUrlStatus; fwdNow: number; age: number } | undefined;
  for (const f of read) {
    const idx = rowIndex(f.answer.status);
    const row =
      (e.targetPort !== undefined ? idx.byPort.get(e.targetPort) : undefined) ?? idx.byUrl.get(e.url);
    if (!row) continue;
    const fwdNow = forwarderNow(f, now);
    const age = ageOfNewest(row, fwdNow);
    if (!best || age < best.age) best = { row, fwdNow, age };
  }
  if (!best) return `not served by the forwarders read${partial}`;
  return `${dataPathText(eventTimes(best.row), best.fwdNow)}${partial}`;
}

/** The cells of every endpoint, by id. */
export function dataPathCells(
  endpoints: readonly (EndpointRef & { id: string })[],
  snap: DataPathSnapshot | undefined,
  now: number,
): Map<string, string> {
  return new Map(endpoints.map((e) => [e.id, dataPathCell(e, snap, now)]));
}

/** A forwarder pod as listed (only the fields read here; everything else passes through). */
export const ForwarderPodSchema = z
  .object({
    metadata: z.object({ name: z.string() }).loose(),
    spec: z
      .object({
        containers: z
          .array(
            z
              .object({
                ports: z
                  .array(z.object({ name: z.string().optional(), containerPort: z.number().int() }).loose())
                  .optional(),
              })
              .loose(),
          )
          .default([]),
      })
      .loose()
      .optional(),
    status: z.object({ phase: z.string().optional(), podIP: z.string().optional() }).loose().optional(),
  })
  .loose();
export type ForwarderPod = z.infer<typeof ForwarderPodSchema>;

/** Where to read one forwarder pod's `/status`, or why it cannot be read: its `http` port on its pod IP. */
export function podTarget(pod: ForwarderPod): {
  name: string;
  url?: string;
  problem?: string;
  notRunning?: true;
} {
  const name = `pod ${pod.metadata.name}`;
  const port = pod.spec?.containers.flatMap((c) => c.ports ?? []).find((p) => p.name === 'http');
  const phase = pod.status?.phase;
  const ip = pod.status?.podIP;
  if (!port) return { name, problem: 'the pod has no container port named http' };
  if (phase !== 'Running')
    return { name, problem: `the pod is ${phase ?? 'without a phase'}, not Running`, notRunning: true };
  if (!ip) return { name, problem: 'the pod has no IP yet' };
  const host = ip.includes(':') ? `[${ip}]` : ip;
  return { name, url: `http://${host}:${port.containerPort}/status` };
}
