import type { Registry } from 'prom-client';
import { ownershipSelector, type InstallIdentity } from '../binding/identity.js';
import type { ClusterView, NamespacePhase } from '../binding/types.js';
import {
  collectionPath,
  createCache,
  keyOf,
  kinds,
  type Cache,
  type CacheTuning,
  type KubeTransport,
  type Namespace,
  type Service,
} from '../kube/index.js';
import type { Logger } from '../log/logger.js';

/** What a write left behind, until the watch shows the same (or a later) state. */
interface Pending {
  object: Service | null;
  resourceVersion: string | undefined;
  at: number;
}

/** Foreign Services learned from AlreadyExists; checked again after `recheckAt`. */
interface Foreign {
  recheckAt: number;
  checks: number;
}

const PENDING_TTL_MS = 30_000;

function rvAtLeast(seen: string | undefined, wrote: string | undefined): boolean {
  if (seen === undefined || wrote === undefined) return false;
  if (seen === wrote) return true;
  // RVs are opaque, but every real server issues integers; comparing them keeps a lagging watch
  // from masking a write that is already past it.
  return /^[0-9]+$/.test(seen) && /^[0-9]+$/.test(wrote) && BigInt(seen) >= BigInt(wrote);
}

/**
 * The controller's view of the cluster: this install's Services (all namespaces, selected by
 * the ownership labels), all Namespaces, foreign Services learned at write time, and the
 * writes the watch has not shown yet (so a second pass right after a write does not write again).
 */
export class ClusterState {
  readonly services: Cache<Service>;
  readonly namespaces: Cache<Namespace>;
  private readonly pending = new Map<string, Pending>();
  private readonly foreignKeys = new Map<string, Foreign>();

  constructor(opts: {
    transport: KubeTransport;
    identity: InstallIdentity;
    log: Logger;
    metrics: Registry;
    onChange: () => void;
    tuning?: Partial<CacheTuning>;
  }) {
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
    const seen = (obj: Service): void => {
      const key = keyOf(obj);
      const p = this.pending.get(key);
      if (p && (p.object === null ? false : rvAtLeast(obj.metadata.resourceVersion, p.resourceVersion))) {
        this.pending.delete(key);
      }
      opts.onChange();
    };
    this.services.on('add', seen);
    this.services.on('update', (_old, obj) => seen(obj));
    this.services.on('delete', (obj) => {
      const key = keyOf(obj);
      const p = this.pending.get(key);
      // Our delete seen, or a deletion newer than our write (someone deleted what we wrote).
      if (p && (p.object === null || rvAtLeast(obj.metadata.resourceVersion, p.resourceVersion))) {
        this.pending.delete(key);
      }
      opts.onChange();
    });
    const nsChanged = (): void => opts.onChange();
    this.namespaces.on('add', nsChanged);
    this.namespaces.on('update', nsChanged);
    this.namespaces.on('delete', nsChanged);
  }

  start(): void {
    this.services.start();
    this.namespaces.start();
  }

  async stop(): Promise<void> {
    await Promise.all([this.services.stop(), this.namespaces.stop()]);
  }

  get synced(): boolean {
    return this.services.synced && this.namespaces.synced;
  }

  async waitForSync(signal: AbortSignal): Promise<void> {
    await Promise.all([this.services.waitForSync(signal), this.namespaces.waitForSync(signal)]);
  }

  /** Records a successful write (null: deleted) so the next pass sees it before the watch does. */
  wrote(key: string, object: Service | null, now: number): void {
    const [namespace, name] = key.split('/') as [string, string];
    const cached = this.services.get(namespace, name);
    // The watch can deliver our write before the HTTP answer arrives; then there is nothing to
    // bridge, and a pending entry would hide what happens next (a deletion) until it expired.
    if (object && cached && rvAtLeast(cached.metadata.resourceVersion, object.metadata.resourceVersion))
      return;
    if (!object && !cached) return;
    this.pending.set(key, { object, resourceVersion: object?.metadata.resourceVersion, at: now });
  }

  /** Forgets what we believed about a key (after a Conflict or a NotFound: the cache is the truth again). */
  forget(key: string): void {
    this.pending.delete(key);
  }

  markForeign(key: string, now: number): void {
    const f = this.foreignKeys.get(key);
    const checks = (f?.checks ?? 0) + 1;
    // Checked again after 2 s, doubling to 5 min: a foreign Service that goes away is noticed
    // soon, and one that stays costs a GET every few minutes.
    this.foreignKeys.set(key, { checks, recheckAt: now + Math.min(300_000, 2_000 * 2 ** (checks - 1)) });
  }

  clearForeign(key: string): void {
    this.foreignKeys.delete(key);
  }

  /** Foreign keys whose recheck is due. */
  foreignDue(now: number): string[] {
    return [...this.foreignKeys].filter(([, f]) => f.recheckAt <= now).map(([k]) => k);
  }

  /** The earliest time a foreign key is due, if any. */
  nextForeignCheck(): number | undefined {
    let min: number | undefined;
    for (const f of this.foreignKeys.values())
      min = min === undefined ? f.recheckAt : Math.min(min, f.recheckAt);
    return min;
  }

  /** The current view: cache plus writes the watch has not delivered yet. */
  view(now: number): ClusterView & { ownedByKey: Map<string, Service> } {
    const ownedByKey = new Map<string, Service>();
    for (const s of this.services.list()) ownedByKey.set(keyOf(s), s);
    for (const [key, p] of this.pending) {
      if (now - p.at > PENDING_TTL_MS) {
        this.pending.delete(key);
        continue;
      }
      if (p.object === null) ownedByKey.delete(key);
      else ownedByKey.set(key, p.object);
    }
    const namespaces = new Map<string, NamespacePhase>();
    for (const ns of this.namespaces.list()) {
      const terminating = ns.status?.phase === 'Terminating' || ns.metadata.deletionTimestamp !== undefined;
      namespaces.set(ns.metadata.name, terminating ? 'Terminating' : 'Active');
    }
    return {
      owned: [...ownedByKey.values()],
      ownedByKey,
      namespaces,
      foreign: new Set(this.foreignKeys.keys()),
    };
  }
}
