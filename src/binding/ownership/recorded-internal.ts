/**
 * Pure: how the install record's `internal-services` list must change after a pass of the leader
 * (docs/projection.md "Ownership"). The leader sends a change (uids to add, uids to remove), never
 * a whole list: the writer applies it to the list it reads fresh from the API server, so a leader
 * whose copy of the record lags behind its predecessor's last write cannot drop what that one added.
 */

/** An absent Service's uid stays listed this long (a watch that lags must not unlist a live one). */
export const RECORDED_ABSENT_GRACE_MS = 5 * 60_000;

export interface RecordedInternalInput {
  /** The list as read from the record; undefined: it has none yet (then it is written at once). */
  recorded: ReadonlySet<string> | undefined;
  /** Uids of this install's labelled internal Services the pass saw (cache, pending writes, creates). */
  present: ReadonlySet<string>;
  /** Uids of the internal Services the pass trusted or wrote: every one must be listed. */
  trusted: ReadonlySet<string>;
  /** Uids the pass deleted. */
  deleted: ReadonlySet<string>;
  /** Since when each listed uid has been missing from `present` (from the previous call). */
  absentSince: ReadonlyMap<string, number>;
  now: number;
  graceMs?: number;
}

export interface RecordedInternalChange {
  /** Something to write: uids to add or remove, or the record has no list yet. */
  changed: boolean;
  add: string[];
  remove: string[];
  /** For the next call. */
  absentSince: Map<string, number>;
}

export function recordedInternalChange(input: RecordedInternalInput): RecordedInternalChange {
  const { recorded, present, trusted, deleted, now } = input;
  const grace = input.graceMs ?? RECORDED_ABSENT_GRACE_MS;
  const add: string[] = [];
  for (const uid of trusted) if (!deleted.has(uid) && !recorded?.has(uid)) add.push(uid);
  // A deleted uid goes even when the record does not show it yet (its add may still be pending).
  const remove = new Set<string>(deleted);
  const absentSince = new Map<string, number>();
  for (const uid of recorded ?? []) {
    if (deleted.has(uid) || present.has(uid)) continue;
    const since = input.absentSince.get(uid) ?? now;
    if (now - since >= grace) remove.add(uid);
    else absentSince.set(uid, since);
  }
  return {
    changed: recorded === undefined || add.length > 0 || remove.size > 0,
    add: add.sort(),
    remove: [...remove].sort(),
    absentSince,
  };
}

/**
 * The list after `change`, applied to the one read fresh (absent: empty), sorted. At most `cap`
 * uids: adds beyond it are dropped and counted (those Services then steer nothing after a restart).
 */
export function applyRecordedChange(
  current: readonly string[] | undefined,
  change: { add: Iterable<string>; remove: Iterable<string> },
  cap = Number.POSITIVE_INFINITY,
): { uids: string[]; dropped: number } {
  const next = new Set(current ?? []);
  for (const uid of change.remove) next.delete(uid);
  let dropped = 0;
  for (const uid of change.add) {
    if (next.has(uid)) continue;
    if (next.size >= cap) dropped++;
    else next.add(uid);
  }
  return { uids: [...next].sort(), dropped };
}
