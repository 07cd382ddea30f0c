/**
 * Per-URL data-path health: what the forwarder observed of its last connections to each endpoint
 * URL (last success, last failure with the ingress's ERR code and its catalogue text, counts over
 * the last minutes). Pure: time comes in as an argument, so tests drive it with plain numbers.
 *
 * Memory is bounded by the number of URLs times WINDOW_MINUTES buckets; `retain` drops URLs the
 * forwarder no longer serves.
 */
import { errorCatalogue } from '../api/error-codes/index.js';

/** How many one-minute buckets the counts cover. */
export const WINDOW_MINUTES = 5;
const MINUTE_MS = 60_000;

/** One observed connection: the dial through the ingress succeeded, or it failed (with the ingress's code when it answered). */
export type DialResult = { ok: true } | { ok: false; code?: string; message: string };

export interface UrlFailure {
  /** Milliseconds since the epoch. */
  at: number;
  /** The ingress's ERR_7xx (or the forwarder's own ERR_79x); absent when nothing was dialled. */
  code?: string | undefined;
  /** The catalogue's text for `code` (docs/errors.md), else the observed message. */
  title: string;
  /** What was observed for this connection (the ingress's `msg` or the local error). */
  message: string;
}

export interface UrlHealth {
  url: string;
  /** Milliseconds since the epoch of the last successful dial. */
  lastSuccessAt?: number;
  lastFailure?: UrlFailure;
  /** Counts over the last `windowMinutes` (whole minutes, the current one included). */
  windowMinutes: number;
  successes: number;
  failures: number;
}

interface Bucket {
  minute: number;
  successes: number;
  failures: number;
}

interface Entry {
  lastSuccessAt?: number;
  lastFailure?: UrlFailure;
  buckets: Bucket[];
}

/** The catalogue's text for a code, or undefined for a code it does not know. */
export function codeTitle(code: string | undefined): string | undefined {
  if (!code) return undefined;
  const info = (errorCatalogue as Record<string, { title: string } | undefined>)[code];
  return info?.title;
}

export class UrlHealthRecorder {
  private readonly entries = new Map<string, Entry>();

  record(url: string, result: DialResult, now: number): void {
    let e = this.entries.get(url);
    if (!e) {
      e = { buckets: [] };
      this.entries.set(url, e);
    }
    const minute = Math.floor(now / MINUTE_MS);
    let b = e.buckets.find((x) => x.minute === minute);
    if (!b) {
      b = { minute, successes: 0, failures: 0 };
      e.buckets.push(b);
      e.buckets = e.buckets.filter((x) => x.minute > minute - WINDOW_MINUTES);
    }
    if (result.ok) {
      b.successes++;
      if (e.lastSuccessAt === undefined || now >= e.lastSuccessAt) e.lastSuccessAt = now;
      return;
    }
    b.failures++;
    if (e.lastFailure === undefined || now >= e.lastFailure.at) {
      e.lastFailure = {
        at: now,
        ...(result.code ? { code: result.code } : {}),
        title: codeTitle(result.code) ?? result.message,
        message: result.message,
      };
    }
  }

  /** Forgets every URL not in `urls` (the listeners' URLs now), so the map follows the configuration. */
  retain(urls: Iterable<string>): void {
    const keep = new Set(urls);
    for (const url of [...this.entries.keys()]) if (!keep.has(url)) this.entries.delete(url);
  }

  /** The health of `url` at `now`; a URL never dialled has no success, no failure and zero counts. */
  get(url: string, now: number): UrlHealth {
    const e = this.entries.get(url);
    const from = Math.floor(now / MINUTE_MS) - WINDOW_MINUTES;
    const live = e?.buckets.filter((b) => b.minute > from) ?? [];
    return {
      url,
      ...(e?.lastSuccessAt !== undefined ? { lastSuccessAt: e.lastSuccessAt } : {}),
      ...(e?.lastFailure ? { lastFailure: e.lastFailure } : {}),
      windowMinutes: WINDOW_MINUTES,
      successes: live.reduce((n, b) => n + b.successes, 0),
      failures: live.reduce((n, b) => n + b.failures, 0),
    };
  }

  urls(): string[] {
    return [...this.entries.keys()];
  }
}

function ago(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 120) return `${s}s ago`;
  const m = Math.round(s / 60);
  if (m < 120) return `${m}m ago`;
  return `${Math.round(m / 60)}h ago`;
}

/**
 * The data-path cell `status` shows: the later of the last success and the last failure, e.g.
 * `ok 2s ago`, `upstream refused (ERR_730) 5s ago`, `no traffic yet`.
 */
export function dataPathText(h: Pick<UrlHealth, 'lastSuccessAt' | 'lastFailure'>, now: number): string {
  const s = h.lastSuccessAt;
  const f = h.lastFailure;
  if (s === undefined && f === undefined) return 'no traffic yet';
  if (f === undefined || (s !== undefined && s >= f.at)) return `ok ${ago(now - s!)}`;
  return `${shortFailure(f)} ${ago(now - f.at)}`;
}

/** A short phrase for a failure: the catalogue's title made brief for a table cell, with its code. */
function shortFailure(f: UrlFailure): string {
  const text = SHORT[f.code ?? ''] ?? f.title.replace(/\.$/, '');
  return f.code ? `${text} (${f.code})` : text;
}

/** Table-cell phrases for the codes a data path meets most; others use the catalogue title. */
const SHORT: Record<string, string> = {
  ERR_730: 'upstream refused',
  ERR_731: 'upstream unreachable',
};
