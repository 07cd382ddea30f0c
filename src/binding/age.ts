/**
 * "Oldest first" for endpoints and Services. RFC 3339 strings with different offsets or
 * fractions do not sort as text, so they are compared as instants; a missing or unparsable
 * time counts as newest, and equal instants fall back to the text, then to the caller's key.
 */

/** A precomputed sort key, so sorting many items parses each timestamp once. */
export interface AgeKey {
  instant: number;
  text: string;
  key: string;
}

export function ageKey(timestamp: string | undefined, key: string): AgeKey {
  const t = timestamp === undefined ? NaN : Date.parse(timestamp);
  return { instant: Number.isNaN(t) ? Number.POSITIVE_INFINITY : t, text: timestamp ?? '', key };
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Negative when `a` is older. */
export function compareAgeKeys(a: AgeKey, b: AgeKey): number {
  if (a.instant !== b.instant) return a.instant < b.instant ? -1 : 1;
  return compareText(a.text, b.text) || compareText(a.key, b.key);
}

/** Negative when `a` is older; ties broken by `keyA`/`keyB` (an id, a `namespace/name`). */
export function compareAge(a: string | undefined, keyA: string, b: string | undefined, keyB: string): number {
  return compareAgeKeys(ageKey(a, keyA), ageKey(b, keyB));
}
