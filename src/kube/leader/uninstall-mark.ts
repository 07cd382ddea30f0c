/**
 * The mark `endpoint-binder uninstall` leaves on the controllers' Lease. Old controllers keep
 * running until Helm deletes them after the pre-delete hook; if one took the Lease back it would
 * re-create what the uninstall removed. So a controller that sees the mark stands down for good
 * (for the life of its process), while a new install's controllers (new processes, which find
 * the mark already there and the Lease released) lead at once. Format in docs/controller.md
 * "Uninstall".
 */

/** Annotation on the Lease: when the latest uninstall began (RFC 3339). */
export const UNINSTALLED_AT_ANNOTATION = 'endpoint-binder.io/uninstalled-at';

/** Holder identities written by an uninstall in progress: `uninstall/<run uid>`. */
export const UNINSTALL_HOLDER_PREFIX = 'uninstall/';

export function uninstallHolder(runUid: string): string {
  return `${UNINSTALL_HOLDER_PREFIX}${runUid}`;
}

export function isUninstallHolder(holder: string | undefined): boolean {
  return holder !== undefined && holder.startsWith(UNINSTALL_HOLDER_PREFIX);
}

/**
 * Whether a controller must stand down, given the mark it found the first time it read the
 * Lease (`baseline`) and what it reads now. An uninstall in progress (its holder) or a mark
 * written since this process first looked both mean this process belongs to an uninstalled
 * install. A mark that was already there at the first read is a previous install's: ignored.
 */
export function uninstallObserved(
  baseline: string | undefined,
  now: { holder: string; mark: string | undefined },
): boolean {
  if (isUninstallHolder(now.holder)) return true;
  return now.mark !== undefined && now.mark !== baseline;
}
