import type { Registry } from 'prom-client';
import {
  installRecordName,
  lostLabelSelector,
  ownershipSelector,
  type InstallIdentity,
} from '../binding/ownership/index.js';
import type { NamespacePhase } from '../binding/types.js';
import {
  collectionPath,
  createCache,
  keyOf,
  kinds,
  type Cache,
  type CacheTuning,
  type ConfigMap,
  type KubeTransport,
  type Namespace,
  type Service,
} from '../kube/index.js';
import type { Logger } from '../log/logger.js';
import type { NameRecord } from './decide/name-lookup.js';

/** A write of ours the watch has not shown yet (so the pass right after it does not write again). */
export interface PendingWrite {
  /** What the write left at the key: the API server's answer, or null after a delete. */
  object: Service | null;
  /** For a delete: the resourceVersion of the object deleted. */
  deletedResourceVersion: string | undefined;
  at: number;
}

/** What is known about a name this install wants and does not hold (decide/name-lookup.ts). */
export type { NameRecord } from './decide/name-lookup.js';

/**
 * Everything the reconcile pass reads about the cluster, as one plain value: the caches (with
 * the writes the watch has not shown yet laid over them), namespace phases, and the names known
 * to be held by others, with their history.
 */
export interface ClusterSnapshot {
  /** Every cache (Services, Namespaces, the install record) has listed once. */
  synced: boolean;
  /** The resourceVersion the Service cache is current to. */
  resourceVersion: string;
  /** This install's Services by `namespace/name`: the cache plus pending writes. */
  owned: ReadonlyMap<string, Service>;
  namespaces: ReadonlyMap<string, NamespacePhase>;
  /** Each namespace's labels (the namespace policy's selector reads them). */
  namespaceLabels: ReadonlyMap<string, Readonly<Record<string, string>>>;
  names: ReadonlyMap<string, NameRecord>;
  pending: ReadonlyMap<string, PendingWrite>;
  /** The install record ConfigMap as watched (undefined: none), with its list of internal Services. */
  installRecord: ConfigMap | undefined;
  /** Aliases with this install's labels except `managed-by` (left behind; binding/ownership/left-behind.ts). */
  lostLabel: readonly Service[];
}

const PENDING_TTL_MS = 30_000;
/**
 * A write the cache is provably behind (integer resourceVersions, the cache's older) is kept this
 * long at most: a watch that delayed events longer has failed, and its relist is the truth.
 */
const PENDING_MAX_MS = 10 * 60_000;

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
 * The controller's read model. Two inputs and nothing else: the watches (caches of this
 * install's Services, selected by the ownership labels, and of all Namespaces) and the
 * reconciler, the only writer of what it learned (pending writes, names held by others).
 */
export class ClusterState {
  readonly services: Cache<Service>;
  readonly namespaces: Cache<Namespace>;
  /**
   * The install record, watched by name: every replica knows the leader's list of internal
   * Services within moments of its write (a follower, a replica that just started or leads).
   */
  readonly installRecord: Cache<ConfigMap>;
  /**
   * Aliases that carry this install's labels except `managed-by` (someone removed it): never
   * written as ours, but listed in `/status` as left behind and, when provably ours, relabelled.
   */
  readonly lostLabel: Cache<Service>;
  private readonly recordKey: string;
  private readonly recordNamespace: string;
  private readonly pending = new Map<string, PendingWrite>();
  private readonly names = new Map<string, NameRecord>();
  private readonly pendingTtlMs: number;
  private readonly onChange: () => void;

  constructor(opts: {
    transport: KubeTransport;
    identity: InstallIdentity;
    log: Logger;
    metrics: Registry;
    /** Called on every cache event (the work queue's `add`). */
    onChange: () => void;
    tuning?: Partial<CacheTuning>;
    /** How long a write the cache cannot be proven behind overlays it (default 30 s). */
    pendingTtlMs?: number;
  }) {
    this.pendingTtlMs = opts.pendingTtlMs ?? PENDING_TTL_MS;
    this.onChange = opts.onChange;
    const common = {
      transport: opts.transport,
      logger: opts.log,
      metrics: opts.metrics,
      ...(opts.tuning ? { options: opts.tuning } : {}),
    };
    this.services = createCache({
      ...common,
      name: 'services',
      path: collectionPath(kinds.service),
      labelSelector: ownershipSelector(opts.identity),
      schema: kinds.service.schema,
    });
    this.namespaces = createCache({
      ...common,
      name: 'namespaces',
      path: collectionPath(kinds.namespace),
      schema: kinds.namespace.schema,
    });
    this.recordKey = installRecordName(opts.identity);
    this.recordNamespace = opts.identity.operatorNamespace;
    this.installRecord = createCache({
      ...common,
      name: 'install-record',
      path: collectionPath(kinds.configMap, opts.identity.operatorNamespace),
      fieldSelector: `metadata.name=${this.recordKey}`,
      schema: kinds.configMap.schema,
    });
    this.lostLabel = createCache({
      ...common,
      name: 'left-behind-aliases',
      path: collectionPath(kinds.service),
      labelSelector: lostLabelSelector(opts.identity),
      schema: kinds.service.schema,
    });
    const changed = (): void => opts.onChange();
    for (const cache of this.caches()) {
      cache.on('add', changed);
      cache.on('update', changed);
      cache.on('delete', changed);
    }
  }

  private caches(): Cache<Service | Namespace | ConfigMap>[] {
    return [this.services, this.namespaces, this.installRecord, this.lostLabel] as Cache<
      Service | Namespace | ConfigMap
    >[];
  }

  start(): void {
    for (const cache of this.caches()) {
      cache.start();
      // A cache that lists nothing emits no event: the last one to sync must still ask for the
      // first pass (a pass before every cache synced does nothing).
      cache.waitForSync().then(
        () => {
          if (this.synced) this.onChange();
        },
        () => undefined,
      );
    }
  }

  async stop(): Promise<void> {
    await Promise.all(this.caches().map((c) => c.stop()));
  }

  get synced(): boolean {
    return this.caches().every((c) => c.synced);
  }

  async waitForSync(signal: AbortSignal): Promise<void> {
    await Promise.all(this.caches().map((c) => c.waitForSync(signal)));
  }

  /** Why the caches are not synced, one line per cache, from their last error. */
  unsyncedReasons(): string[] {
    const out: string[] = [];
    for (const cache of this.caches()) {
      if (cache.synced) continue;
      const h = cache.health();
      out.push(h.lastError ? `${cache.name}: ${h.lastError}` : `${cache.name}: not listed yet`);
    }
    return out;
  }

  // ---- written by the reconciler only ----

  /** A successful create or update: the next pass sees `object` until the watch shows it. */
  recordWrite(key: string, object: Service, now: number): void {
    this.pending.set(key, { object, deletedResourceVersion: undefined, at: now });
  }

  /** A successful delete of `deleted` (the live object the delete carried a precondition for). */
  recordDelete(key: string, deleted: Service | undefined, now: number): void {
    this.pending.set(key, {
      object: null,
      deletedResourceVersion: deleted?.metadata.resourceVersion,
      at: now,
    });
  }

  /** After a Conflict or a failure: the cache is the truth about `key` again. */
  forgetWrite(key: string): void {
    this.pending.delete(key);
  }

  /**
   * What a read (or a create refused with AlreadyExists) showed about a name. Returns true when
   * that changes what a pass would decide (a new name, or another holder).
   */
  recordName(key: string, holder: NameRecord['holder'], now: number, detail?: string): boolean {
    const prev = this.names.get(key);
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
      // A failed recheck tells nothing new: what was last seen stands.
      next.holder = prev.holder;
    }
    this.names.set(key, next);
    return prev?.holder !== next.holder || prev.detail !== next.detail;
  }

  /** Keeps only the names `keep` still needs (those the last pass asked about and does not hold). */
  retainNames(keep: (key: string, record: NameRecord) => boolean): void {
    for (const [key, record] of this.names) if (!keep(key, record)) this.names.delete(key);
  }

  name(key: string): NameRecord | undefined {
    return this.names.get(key);
  }

  // ---- read ----

  /** The current state as a plain value; writes the watch has caught up with are dropped here. */
  snapshot(now: number): ClusterSnapshot {
    const owned = new Map<string, Service>();
    for (const s of this.services.list()) owned.set(keyOf(s), s);
    const watchedTo = this.services.lastSyncResourceVersion;
    for (const [key, p] of this.pending) {
      const cached = owned.get(key);
      const age = now - p.at;
      // A delayed watch event must not undo a write: while the cache is provably older than
      // what was written, the write stands (re-sending it would send the same bytes again).
      const expired =
        age > PENDING_MAX_MS || (age > this.pendingTtlMs && !this.provablyBehind(p, cached, watchedTo));
      if (expired || this.caughtUp(p, cached, watchedTo)) {
        this.pending.delete(key);
        continue;
      }
      if (p.object === null) owned.delete(key);
      else owned.set(key, p.object);
    }
    const namespaces = new Map<string, NamespacePhase>();
    const namespaceLabels = new Map<string, Readonly<Record<string, string>>>();
    for (const ns of this.namespaces.list()) {
      namespaceLabels.set(ns.metadata.name, ns.metadata.labels ?? {});
      const terminating = ns.status?.phase === 'Terminating' || ns.metadata.deletionTimestamp !== undefined;
      namespaces.set(ns.metadata.name, terminating ? 'Terminating' : 'Active');
    }
    return {
      synced: this.synced,
      resourceVersion: watchedTo,
      owned,
      namespaces,
      namespaceLabels,
      names: new Map(this.names),
      pending: new Map(this.pending),
      installRecord: this.installRecord.get(this.recordNamespace, this.recordKey),
      lostLabel: this.lostLabel.list(),
    };
  }

  /**
   * The cache shows an object older than this write (or, for a create, the watch is not yet at
   * its resourceVersion; for a delete, it still shows exactly the object deleted).
   */
  private provablyBehind(p: PendingWrite, cached: Service | undefined, watchedTo: string): boolean {
    if (p.object === null)
      return cached !== undefined && cached.metadata.resourceVersion === p.deletedResourceVersion;
    const wrote = p.object.metadata.resourceVersion;
    return cached ? rvBelow(cached.metadata.resourceVersion, wrote) : rvBelow(watchedTo, wrote);
  }

  /** The watch has shown this write, or something newer at its key. */
  private caughtUp(p: PendingWrite, cached: Service | undefined, watchedTo: string): boolean {
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
}
