import type { Service } from '../../kube/objects.js';

/**
 * The read model's overlay of this process's own writes (docs/controller.md "Writes"): a write
 * the watch has not shown yet stands over the cache, so the pass right after it does not write
 * again, until the watch shows it (or something newer) or it expires. Pure: the read model
 * (cluster.ts, or a test's stand-in for its watches) hands in what its caches hold.
 */

/** A write of ours the watch has not shown yet (so the pass right after it does not write again). */
export interface PendingWrite {
  /** What the write left at the key: the API server's answer, or null after a delete. */
  object: Service | null;
  /** For a delete: the resourceVersion of the object deleted. */
  deletedResourceVersion: string | undefined;
  at: number;
}

/** How long a write the cache cannot be proven behind overlays it, by default. */
export const PENDING_TTL_MS = 30_000;
/**
 * A write the cache is provably behind (integer resourceVersions, the cache's older) is kept this
 * long at most: a watch that delayed events longer has failed, and its relist is the truth.
 */
export const PENDING_MAX_MS = 10 * 60_000;

function rvBelow(seen: string | undefined, wrote: string | undefined): boolean {
  if (seen === undefined || wrote === undefined) return false;
  return /^[0-9]+$/.test(seen) && /^[0-9]+$/.test(wrote) && BigInt(seen) < BigInt(wrote);
}

function rvAtLeast(seen: string | undefined, wrote: string | undefined): boolean {
  if (seen === undefined || wrote === undefined) return false;
  if (seen === wrote) return true;
  // RVs are opaque, but every real server issues integers; comparing them keeps a lagging watch
  // from masking a write that is already past it.
  return /^[0-9]+$/.test(seen) && /^[0-9]+$/.test(wrote) && BigInt(seen) >= BigInt(wrote);
}

/**
 * The cache shows an object older than this write (or, for a create, the watch is not yet at
 * its resourceVersion; for a delete, it still shows exactly the object deleted).
 */
function provablyBehind(p: PendingWrite, cached: Service | undefined, watchedTo: string): boolean {
  if (p.object === null)
    return cached !== undefined && cached.metadata.resourceVersion === p.deletedResourceVersion;
  const wrote = p.object.metadata.resourceVersion;
  return cached ? rvBelow(cached.metadata.resourceVersion, wrote) : rvBelow(watchedTo, wrote);
}

/** The watch has shown this write, or something newer at its key. */
function caughtUp(p: PendingWrite, cached: Service | undefined, watchedTo: string): boolean {
  if (p.object === null) {
    // Our delete seen, or a newer object there (someone created it again).
    if (!cached) return true;
    const rv = cached.metadata.resourceVersion;
    return (
      p.deletedResourceVersion !== undefined &&
      rv !== p.deletedResourceVersion &&
      rvAtLeast(rv, p.deletedResourceVersion)
    );
  }
  const wrote = p.object.metadata.resourceVersion;
  // Our write seen (or a later one); or the watch is past it and the key is gone (deleted since).
  if (cached) return rvAtLeast(cached.metadata.resourceVersion, wrote);
  return rvAtLeast(watchedTo, wrote);
}

/**
 * Lays the pending writes over `owned` (the cache by `namespace/name`, changed in place) and
 * returns the keys whose pending write is over: caught up by the watch, or expired. A delayed
 * watch event must not undo a write: while the cache is provably older than what was written,
 * the write stands (re-sending it would send the same bytes again).
 */
export function overlayPending(
  owned: Map<string, Service>,
  pending: ReadonlyMap<string, PendingWrite>,
  p: { watchedTo: string; now: number; pendingTtlMs: number },
): string[] {
  const over: string[] = [];
  for (const [key, w] of pending) {
    const cached = owned.get(key);
    const age = p.now - w.at;
    const expired = age > PENDING_MAX_MS || (age > p.pendingTtlMs && !provablyBehind(w, cached, p.watchedTo));
    if (expired || caughtUp(w, cached, p.watchedTo)) {
      over.push(key);
      continue;
    }
    if (w.object === null) owned.delete(key);
    else owned.set(key, w.object);
  }
  return over;
}
