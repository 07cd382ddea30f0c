import { clone, type KubeObject } from './types.js';

/**
 * The in-memory "etcd": objects per resource type, one cluster-wide resourceVersion counter and
 * an event log used for watch replay and for consistent paginated reads at an older
 * resourceVersion. The log is compacted to the last `window` events, like etcd compaction; any
 * read or watch that needs history from before the compaction point is answered with 410.
 */

export type StoreEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface StoreEvent {
  rv: number;
  type: StoreEventType;
  resource: string;
  /** State after the event; for DELETED the last state, stamped with the deletion's RV. */
  object: KubeObject;
  /** State before the event (undefined for ADDED). */
  prev?: KubeObject;
}

export type StoreListener = (event: StoreEvent) => void;

/** `ns/name` for namespaced objects, `name` otherwise: the sort order of list results (etcd key order). */
export function objectKey(obj: Pick<KubeObject, 'metadata'>): string {
  return obj.metadata.namespace ? `${obj.metadata.namespace}/${obj.metadata.name}` : obj.metadata.name;
}

export class Store {
  private rv: number;
  /** Events with rv <= compactedRv are gone; history after it is complete. */
  private compactedRv: number;
  private readonly log: StoreEvent[] = [];
  private readonly objects = new Map<string, Map<string, KubeObject>>();
  private readonly listeners = new Set<StoreListener>();

  constructor(
    private readonly window: number,
    initialRv = 100,
  ) {
    this.rv = initialRv;
    this.compactedRv = initialRv;
  }

  currentRv(): number {
    return this.rv;
  }

  oldestAvailableRv(): number {
    return this.compactedRv;
  }

  get(resource: string, key: string): KubeObject | undefined {
    const obj = this.objects.get(resource)?.get(key);
    return obj ? clone(obj) : undefined;
  }

  /** Current objects of a type, optionally in one namespace, in key order. */
  list(resource: string, namespace?: string): KubeObject[] {
    return this.view(resource, namespace).map(clone);
  }

  /**
   * Like `list`, without the copies: the stored objects themselves, which nobody may modify (a
   * write stores a new object; events already hand these out). For readers that filter or page
   * first and copy only what they return: a 500-item page of 6,000 Services copies 500, not 6,000.
   */
  view(resource: string, namespace?: string): readonly KubeObject[] {
    return inKeyOrder(this.objects.get(resource) ?? new Map<string, KubeObject>(), namespace);
  }

  /** Objects of a type as they were at `rv`, or undefined when that history was compacted. */
  listAt(resource: string, rv: number, namespace?: string): KubeObject[] | undefined {
    return this.viewAt(resource, rv, namespace)?.map(clone);
  }

  /** `listAt` without the copies (see `view`). */
  viewAt(resource: string, rv: number, namespace?: string): readonly KubeObject[] | undefined {
    if (rv < this.compactedRv) return undefined;
    const state = new Map<string, KubeObject>(this.objects.get(resource) ?? []);
    for (let i = this.log.length - 1; i >= 0; i--) {
      const ev = this.log[i];
      if (!ev || ev.rv <= rv) break;
      if (ev.resource !== resource) continue;
      const key = objectKey(ev.object);
      if (ev.prev) state.set(key, ev.prev);
      else state.delete(key);
    }
    return inKeyOrder(state, namespace);
  }

  /** Events after `rv` (all types), or undefined when some of them were compacted away. */
  eventsSince(rv: number): StoreEvent[] | undefined {
    if (rv < this.compactedRv) return undefined;
    const out: StoreEvent[] = [];
    for (let i = this.log.length - 1; i >= 0; i--) {
      const ev = this.log[i];
      if (!ev || ev.rv <= rv) break;
      out.push(ev);
    }
    return out.reverse();
  }

  /** Writes an object (create or update), stamping the next resourceVersion. Returns the stored copy. */
  put(resource: string, obj: KubeObject): KubeObject {
    const key = objectKey(obj);
    let bucket = this.objects.get(resource);
    if (!bucket) {
      bucket = new Map();
      this.objects.set(resource, bucket);
    }
    const prev = bucket.get(key);
    const stored = clone(obj);
    stored.metadata.resourceVersion = String(++this.rv);
    bucket.set(key, stored);
    this.record({
      rv: this.rv,
      type: prev ? 'MODIFIED' : 'ADDED',
      resource,
      object: stored,
      ...(prev ? { prev } : {}),
    });
    return clone(stored);
  }

  /** Removes an object; the DELETED event carries its last state with the deletion's RV. */
  remove(resource: string, key: string): KubeObject | undefined {
    const bucket = this.objects.get(resource);
    const prev = bucket?.get(key);
    if (!bucket || !prev) return undefined;
    bucket.delete(key);
    const last = clone(prev);
    last.metadata.resourceVersion = String(++this.rv);
    this.record({ rv: this.rv, type: 'DELETED', resource, object: last, prev });
    return clone(last);
  }

  /** Every namespaced object of every type in a namespace (for namespace finalization). */
  contentsOf(namespace: string): { resource: string; key: string }[] {
    const out: { resource: string; key: string }[] = [];
    for (const [resource, bucket] of this.objects) {
      for (const [key, obj] of bucket) if (obj.metadata.namespace === namespace) out.push({ resource, key });
    }
    return out;
  }

  /** Forgets all history up to now: older watches and continue tokens get 410. */
  compact(): void {
    this.log.length = 0;
    this.compactedRv = this.rv;
  }

  /**
   * Resolves once the store has reached `rv` or after `timeoutMs`, whichever comes first: the
   * watch cache's waitUntilFreshAndBlock, after which a still-future RV is a 504.
   */
  waitForRv(rv: number, timeoutMs: number): Promise<void> {
    if (this.rv >= rv || timeoutMs <= 0) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        unsubscribe();
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      const unsubscribe = this.subscribe(() => {
        if (this.rv >= rv) done();
      });
    });
  }

  subscribe(listener: StoreListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private record(ev: StoreEvent): void {
    this.log.push(ev);
    while (this.log.length > this.window) {
      const dropped = this.log.shift();
      if (dropped) this.compactedRv = dropped.rv;
    }
    for (const l of this.listeners) l(ev);
  }
}

/** The objects of a bucket (keyed by `objectKey`), optionally of one namespace, in key order. */
function inKeyOrder(bucket: ReadonlyMap<string, KubeObject>, namespace: string | undefined): KubeObject[] {
  const entries: [string, KubeObject][] = [];
  for (const [key, obj] of bucket)
    if (!namespace || obj.metadata.namespace === namespace) entries.push([key, obj]);
  entries.sort(([ka], [kb]) => (ka < kb ? -1 : ka > kb ? 1 : 0));
  return entries.map(([, obj]) => obj);
}
