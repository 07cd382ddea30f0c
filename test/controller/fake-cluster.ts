import { hasLostLabel, isOwnedBy, type InstallIdentity } from '../../src/binding/ownership/index.js';
import type { NamespacePhase } from '../../src/binding/types.js';
import { PENDING_TTL_MS } from '../../src/controller/decide/pending-writes.js';
import { ReadModelNotes, type ClusterSnapshot } from '../../src/controller/read-model.js';
import { keyOf, type ConfigMap, type Service } from '../../src/kube/index.js';

/** Where the stand-in's watches read from: a Services API such as FakeServiceApi. */
export interface ServiceSource {
  list(): Service[];
  /** The resourceVersion of its last write. */
  readonly resourceVersion: string;
}

/**
 * A plain in-memory stand-in for ClusterState's watches (the outside world: an API server's list
 * and watch), under the read model's own rules (ReadModelNotes: pending writes, names read). Its
 * caches show, at every snapshot, what `source` holds now, as a watch that is never behind would:
 * the Services carrying this install's ownership labels (ClusterState's `ownershipSelector`),
 * the aliases that lost `managed-by` (its `lostLabelSelector`), at the source's resourceVersion.
 * Namespaces are Active with the labels given; the install record is whatever the test sets.
 */
export class FakeCluster extends ReadModelNotes {
  synced = true;
  /** Namespace → labels (every one Active). */
  readonly namespaceLabels = new Map<string, Record<string, string>>();
  installRecord: ConfigMap | undefined = undefined;

  constructor(
    private readonly o: {
      identity: InstallIdentity;
      source: ServiceSource;
      namespaces: readonly string[];
      pendingTtlMs?: number;
    },
  ) {
    super(o.pendingTtlMs ?? PENDING_TTL_MS);
    for (const ns of o.namespaces) this.namespaceLabels.set(ns, {});
  }

  snapshot(now: number): ClusterSnapshot {
    const all = this.o.source.list();
    const owned = new Map(all.filter((s) => isOwnedBy(s, this.o.identity)).map((s) => [keyOf(s), s]));
    const watchedTo = this.o.source.resourceVersion;
    const learned = this.overlay(owned, watchedTo, now);
    return {
      synced: this.synced,
      resourceVersion: watchedTo,
      owned,
      namespaces: new Map(
        [...this.namespaceLabels.keys()].map((ns): [string, NamespacePhase] => [ns, 'Active']),
      ),
      namespaceLabels: new Map(this.namespaceLabels),
      ...learned,
      installRecord: this.installRecord,
      lostLabel: all.filter((s) => this.lostLabel(s)),
    };
  }

  private lostLabel(s: Service): boolean {
    return hasLostLabel(s, this.o.identity);
  }
}
