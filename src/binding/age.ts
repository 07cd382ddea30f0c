/**
 * "Oldest first" for endpoints and Services. RFC 3339 strings with different offsets or
 * fractions do not sort as text, so they are compared as instants; a missing or unparsable
 * time counts as newest, and equal instants fall back to the text, then to the caller's key.
 */

function instant(ts: string | undefined): number {
  const t = ts === undefined ? NaN : Date.parse(ts);
  return Number.isNaN(t) ? Number.POSITIVE_INFINITY : t;
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Negative when `a` is older; ties broken by `keyA`/`keyB` (an id, a `namespace/name`). */
export function compareAge(a: string | undefined, keyA: string, b: string | undefined, keyB: string): number {
  const ta = instant(a);
  const tb = instant(b);
  if (ta !== tb) return ta < tb ? -1 : 1;
  return compareText(a ?? '', b ?? '') || compareText(keyA, keyB);
}

/** Endpoints, oldest first by `created_at`, then id. */
export function compareEndpoints(
  a: { created_at: string; id: string },
  b: { created_at: string; id: string },
): number {
  return compareAge(a.created_at, a.id, b.created_at, b.id);
}
