import { keyOf, objectKey, type KubeObject } from '../objects.js';

/** An in-memory map of objects keyed by `namespace/name` (or `name` for cluster-scoped ones). */
export class Store<T extends KubeObject> {
  private readonly items = new Map<string, T>();

  get(namespace: string | undefined, name: string): T | undefined {
    return this.items.get(objectKey(namespace, name));
  }

  list(): T[] {
    return [...this.items.values()];
  }

  get size(): number {
    return this.items.size;
  }

  /** Inserts or replaces; returns the previous object. */
  upsert(obj: T): T | undefined {
    const key = keyOf(obj);
    const old = this.items.get(key);
    this.items.set(key, obj);
    return old;
  }

  /** Removes by key; returns the removed object. */
  remove(key: string): T | undefined {
    const old = this.items.get(key);
    this.items.delete(key);
    return old;
  }

  snapshot(): ReadonlyMap<string, T> {
    return this.items;
  }
}

export interface RelistDiff<T> {
  adds: T[];
  updates: { old: T; new: T }[];
  deletes: T[];
}

/** Two versions of one object differ? RVs are opaque: compared for equality only. */
export function changed(a: KubeObject, b: KubeObject): boolean {
  const ra = a.metadata.resourceVersion;
  const rb = b.metadata.resourceVersion;
  if (ra !== undefined && rb !== undefined) return ra !== rb;
  return JSON.stringify(a) !== JSON.stringify(b);
}

/**
 * What to emit so that a store holding `current` converges on a fresh full listing:
 * objects only in the listing are adds, objects whose RV changed are updates, objects no
 * longer listed are deletes. Unchanged objects produce nothing (no spurious updates).
 */
export function diffRelist<T extends KubeObject>(
  current: ReadonlyMap<string, T>,
  fresh: readonly T[],
): RelistDiff<T> {
  const diff: RelistDiff<T> = { adds: [], updates: [], deletes: [] };
  const seen = new Set<string>();
  for (const obj of fresh) {
    const key = keyOf(obj);
    seen.add(key);
    const old = current.get(key);
    if (old === undefined) diff.adds.push(obj);
    else if (changed(old, obj)) diff.updates.push({ old, new: obj });
  }
  for (const [key, old] of current) {
    if (!seen.has(key)) diff.deletes.push(old);
  }
  return diff;
}
