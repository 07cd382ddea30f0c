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
import { PENDING_TTL_MS } from './decide/pending-writes.js';
import { ReadModelNotes, type ClusterSnapshot } from './read-model.js';

export type { PendingWrite } from './decide/pending-writes.js';
export type { ClusterReadModel, ClusterSnapshot } from './read-model.js';

/** What is known about a name this install wants and does not hold (decide/name-lookup.ts). */
export type { NameRecord } from './decide/name-lookup.js';

/**
 * The controller's read model. Two inputs and nothing else: the watches (caches of this
 * install's Services, selected by the ownership labels, and of all Namespaces) and the
 * reconciler, the only writer of what it learned (pending writes, names held by others).
 */
export class ClusterState extends ReadModelNotes {
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
    super(opts.pendingTtlMs ?? PENDING_TTL_MS);
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

  // ---- read ----

  /** The current state as a plain value; writes the watch has caught up with are dropped here. */
  snapshot(now: number): ClusterSnapshot {
    const owned = new Map<string, Service>();
    for (const s of this.services.list()) owned.set(keyOf(s), s);
    const watchedTo = this.services.lastSyncResourceVersion;
    const learned = this.overlay(owned, watchedTo, now);
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
      ...learned,
      installRecord: this.installRecord.get(this.recordNamespace, this.recordKey),
      lostLabel: this.lostLabel.list(),
    };
  }
}
