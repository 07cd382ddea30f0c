import type { Registry } from 'prom-client';
import {
  INSTANCE_LABEL,
  MANAGED_BY_LABEL,
  MANAGED_BY_VALUE,
  OPERATOR_NAMESPACE_LABEL,
  ownershipSelector,
  ROLE_ALIAS,
  ROLE_LABEL,
  type InstallIdentity,
} from '../binding/identity.js';
import { installRecordName } from '../binding/install-record.js';
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
import { nameRead, type NameRecord } from './decide/name-lookup.js';
import { overlayPending, PENDING_TTL_MS, type PendingWrite } from './decide/pending-writes.js';

export type { PendingWrite } from './decide/pending-writes.js';

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
  /** Aliases with this install's labels except `managed-by` (left behind; binding/left-behind.ts). */
  lostLabel: readonly Service[];
}

/** This install's alias labels with `managed-by` absent or changed (`!=` matches an absent label too). */
export function lostLabelSelector(id: InstallIdentity): string {
  return [
    `${INSTANCE_LABEL}=${id.release}`,
    `${OPERATOR_NAMESPACE_LABEL}=${id.operatorNamespace}`,
    `${ROLE_LABEL}=${ROLE_ALIAS}`,
    `${MANAGED_BY_LABEL}!=${MANAGED_BY_VALUE}`,
  ].join(',');
}

/**
 * What the reconciler reads from and teaches the read model: one snapshot per pass, and what it
 * learned by writing and reading (pending writes, names held by others). `ClusterState` below is
 * the controller's; a test may stand in for its watches (test/controller/fake-cluster.ts) with the
 * same pure rules (decide/pending-writes.ts, decide/name-lookup.ts).
 */
export interface ClusterReadModel {
  /** Every cache has listed once (a pass before that does nothing). */
  readonly synced: boolean;
  snapshot(now: number): ClusterSnapshot;
  /** A successful create or update: the next pass sees `object` until the watch shows it. */
  recordWrite(key: string, object: Service, now: number): void;
  /** A successful delete of `deleted` (the live object the delete carried a precondition for). */
  recordDelete(key: string, deleted: Service | undefined, now: number): void;
  /** After a Conflict or a failure: the cache is the truth about `key` again. */
  forgetWrite(key: string): void;
  /** What a read showed about a name; true when that changes what a pass would decide. */
  recordName(key: string, holder: NameRecord['holder'], now: number, detail?: string): boolean;
  /** Keeps only the names `keep` still needs (those the last pass asked about and does not hold). */
  retainNames(keep: (key: string, record: NameRecord) => boolean): void;
  name(key: string): NameRecord | undefined;
}

/**
 * The controller's read model. Two inputs and nothing else: the watches (caches of this
 * install's Services, selected by the ownership labels, and of all Namespaces) and the
 * reconciler, the only writer of what it learned (pending writes, names held by others).
 */
export class ClusterState implements ClusterReadModel {
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
    const { record, changed } = nameRead(this.names.get(key), holder, now, detail);
    this.names.set(key, record);
    return changed;
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
    const over = overlayPending(owned, this.pending, { watchedTo, now, pendingTtlMs: this.pendingTtlMs });
    for (const key of over) this.pending.delete(key);
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
}
