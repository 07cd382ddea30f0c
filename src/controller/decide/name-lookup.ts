import type { Service } from '../../kube/objects.js';

/**
 * What is known about a Service name this install wants and does not hold (a name it holds is
 * in the cache). Learned by reading the name before the first write that depends on it, and
 * from a create that found the name taken.
 */
export interface NameRecord {
  /**
   * `foreign`: a Service not of this install holds it (never touched; checked again with
   * backoff). `free`: nobody held it at the last read. `unread`: the read failed; planned as free
   * (a create that finds it taken reads the holder) and read again with backoff.
   */
  holder: 'foreign' | 'free' | 'unread';
  /** The last read (or refused create) that told us. */
  checkedAt: number;
  /** Why the foreign holder is not ours, when it says more than "not ours" (see binding/ownership/foreign-holder.ts). */
  detail?: string;
  /** A foreign holder was first seen then (kept after it goes, as history). */
  foreignSince?: number;
  /** A foreign holder was last seen then. */
  foreignLastSeen?: number;
  /** The name was seen free at this time after a foreign holder had been seen. */
  freedAt?: number;
}

/**
 * What is known about a name after one more read (or a create refused with AlreadyExists):
 * `changed` when that changes what a pass would decide (a new name, or another holder). A failed
 * read tells nothing new about a name seen before: what was last seen stands.
 */
export function nameRead(
  prev: NameRecord | undefined,
  holder: NameRecord['holder'],
  now: number,
  detail?: string,
): { record: NameRecord; changed: boolean } {
  const next: NameRecord = { ...prev, holder, checkedAt: now };
  if (holder === 'foreign') {
    if (detail !== undefined) next.detail = detail;
    else delete next.detail;
  } else if (holder === 'free') delete next.detail;
  if (holder === 'foreign') {
    next.foreignSince = prev?.holder === 'foreign' ? (prev.foreignSince ?? now) : now;
    next.foreignLastSeen = now;
  } else if (holder === 'free' && prev?.holder === 'foreign') {
    next.freedAt = now;
  } else if (holder === 'unread' && prev && prev.holder !== 'unread') {
    next.holder = prev.holder;
  }
  return { record: next, changed: prev?.holder !== next.holder || prev.detail !== next.detail };
}

/** `namespace/name` back into its parts (keys are built by `keyOf`, so one slash comes first). */
export function splitKey(key: string): [string, string] {
  const slash = key.indexOf('/');
  return [key.slice(0, slash), key.slice(slash + 1)];
}

/**
 * The names the projection asks about (`cluster.foreign.has(key)`), answered from what is
 * known, and remembered: those nobody has read yet are read before the pass writes anything.
 */
export class NameLookup implements ReadonlySet<string> {
  readonly asked = new Set<string>();
  private readonly foreign: Set<string>;

  /** `held`: names known to be held by Services that are not ours though they carry our labels. */
  constructor(
    private readonly names: ReadonlyMap<string, NameRecord>,
    private readonly held: ReadonlySet<string> = new Set(),
    /** Names this install's Services hold now: a foreign record about them is out of date. */
    private readonly ours: ReadonlyMap<string, unknown> = new Map(),
  ) {
    this.foreign = new Set(
      [...names].filter(([k, r]) => r.holder === 'foreign' && !ours.has(k)).map(([k]) => k),
    );
    for (const k of held) this.foreign.add(k);
  }

  has(key: string): boolean {
    this.asked.add(key);
    return this.foreign.has(key);
  }

  /** What is known about why a foreign holder is not ours, by name (when more than "not ours"). */
  details(): Map<string, string> {
    const out = new Map<string, string>();
    for (const [k, r] of this.names)
      if (r.holder === 'foreign' && r.detail && !this.ours.has(k)) out.set(k, r.detail);
    return out;
  }

  /** Asked, not held by this install, never read. */
  unknown(owned: ReadonlyMap<string, Service>): string[] {
    return [...this.asked].filter((k) => !owned.has(k) && !this.names.has(k) && !this.held.has(k));
  }

  get size(): number {
    return this.foreign.size;
  }
  forEach(cb: (value: string, key: string, set: ReadonlySet<string>) => void): void {
    for (const k of this.foreign) cb(k, k, this);
  }
  entries(): SetIterator<[string, string]> {
    return this.foreign.entries();
  }
  keys(): SetIterator<string> {
    return this.foreign.keys();
  }
  values(): SetIterator<string> {
    return this.foreign.values();
  }
  [Symbol.iterator](): SetIterator<string> {
    return this.foreign.values();
  }
}

/**
 * Names seen free after a foreign Service held them, less than `graceMs` ago, with the time left.
 * (Counted from the read that saw the name free, so never shorter than the real free time.)
 */
export function freedWithinGrace(
  names: ReadonlyMap<string, NameRecord>,
  now: number,
  graceMs: number,
): Map<string, number> {
  const out = new Map<string, number>();
  if (graceMs <= 0) return out;
  for (const [key, r] of names) {
    if (r.holder === 'foreign' || r.freedAt === undefined) continue;
    const left = r.freedAt + graceMs - now;
    if (left > 0) out.set(key, left);
  }
  return out;
}
