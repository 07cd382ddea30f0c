import type { Service } from '../kube/index.js';
import type { ConfigMap } from '../kube/index.js';
import type { NamespacePhase } from '../binding/types.js';
import { nameRead, type NameRecord } from './decide/name-lookup.js';
import { overlayPending, type PendingWrite } from './decide/pending-writes.js';

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
 * What the reconciler taught the read model: its writes the watch has not shown yet, and who
 * holds the names it read, kept by the rules of decide/pending-writes.ts and
 * decide/name-lookup.ts. `ClusterState` (cluster.ts) is this over the controller's watches; a
 * test's stand-in for those watches (test/controller/fake-cluster.ts) is this over plain lists.
 */
export abstract class ReadModelNotes implements ClusterReadModel {
  private readonly pending = new Map<string, PendingWrite>();
  private readonly names = new Map<string, NameRecord>();

  constructor(private readonly pendingTtlMs: number) {}

  abstract readonly synced: boolean;
  abstract snapshot(now: number): ClusterSnapshot;

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

  /**
   * For a snapshot: lays the pending writes over `owned` (the Service cache by `namespace/name`,
   * changed in place; `watchedTo`: the resourceVersion the watch is current to), drops the ones
   * the watch caught up with or that expired, and copies what is known.
   */
  protected overlay(
    owned: Map<string, Service>,
    watchedTo: string,
    now: number,
  ): { names: Map<string, NameRecord>; pending: Map<string, PendingWrite> } {
    const over = overlayPending(owned, this.pending, { watchedTo, now, pendingTtlMs: this.pendingTtlMs });
    for (const key of over) this.pending.delete(key);
    return { names: new Map(this.names), pending: new Map(this.pending) };
  }
}
