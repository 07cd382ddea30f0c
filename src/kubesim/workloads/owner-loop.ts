import type { Logger } from '../../log/logger.js';
import type { ResourceHandlers } from '../handlers.js';
import { resourceKey, type ResourceDef } from '../resources/registry.js';
import { objectKey, type Store, type StoreEvent } from '../store.js';
import { deleteOwnedPods } from './owned-pods.js';
import { controllerUid } from './pod-template.js';

export interface OwnerLoopOptions {
  store: Store;
  handlers: ResourceHandlers;
  /** The kind that owns pods (Jobs, Deployments). */
  owners: ResourceDef;
  pods: ResourceDef;
  log: Logger;
  /** The owner's name in the warn line and its field (`job`, `deployment`). */
  kind: string;
  /** Brings one owner (`namespace/name`) a step closer to its spec; may throw (logged). */
  sync: (key: string) => void;
}

/**
 * What kube-controller-manager's workload controllers share, kubesim's way: an owner is synced
 * when it changes and when one of the pods it controls changes (found by the pod's controller
 * reference), and its pods are deleted when it is deleted (the garbage collector). Store
 * listeners run inside the write, so a sync never runs synchronously: keys are batched into one
 * `setImmediate`, and `syncAfter` keeps one timer per owner (the newest wins; the sync sets the
 * next one). Job and Deployment controllers hold one of these and keep only their own sync.
 */
export class OwnerLoop {
  private readonly ownersKey: string;
  private readonly podsKey: string;
  private readonly queued = new Set<string>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private scheduled = false;
  private unsubscribe: (() => void) | undefined;
  private stoppedFlag = false;

  constructor(private readonly o: OwnerLoopOptions) {
    this.ownersKey = resourceKey(o.owners);
    this.podsKey = resourceKey(o.pods);
  }

  get stopped(): boolean {
    return this.stoppedFlag;
  }

  start(): void {
    this.unsubscribe = this.o.store.subscribe((ev) => this.route(ev));
    for (const owner of this.o.store.list(this.ownersKey)) this.syncSoon(objectKey(owner));
  }

  stop(): void {
    this.stoppedFlag = true;
    this.unsubscribe?.();
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    this.queued.clear();
  }

  /** Syncs `key` on the next turn of the event loop, batched with every other key queued before it. */
  syncSoon(key: string): void {
    if (this.stoppedFlag) return;
    this.queued.add(key);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.drain());
  }

  /** Syncs `key` in `ms`: one timer per owner, replaced by the newest call. */
  syncAfter(key: string, ms: number): void {
    if (this.stoppedFlag) return;
    const existing = this.timers.get(key);
    if (existing) clearTimeout(existing);
    this.timers.set(
      key,
      setTimeout(() => {
        this.timers.delete(key);
        this.syncSoon(key);
      }, ms),
    );
  }

  private drain(): void {
    this.scheduled = false;
    const keys = [...this.queued];
    this.queued.clear();
    for (const key of keys) {
      if (this.stoppedFlag) return;
      try {
        this.o.sync(key);
      } catch (err) {
        this.o.log.warn({ [this.o.kind]: key, err: String(err) }, `kubesim ${this.o.kind} sync failed`);
      }
    }
  }

  private route(ev: StoreEvent): void {
    if (ev.resource === this.ownersKey) {
      if (ev.type !== 'DELETED') return this.syncSoon(objectKey(ev.object));
      const namespace = ev.object.metadata.namespace ?? '';
      const uid = ev.object.metadata.uid;
      setImmediate(() => this.collectGarbage(namespace, uid));
      return;
    }
    if (ev.resource !== this.podsKey) return;
    const owner = controllerUid(ev.object);
    if (!owner) return;
    const namespace = ev.object.metadata.namespace ?? '';
    const found = this.o.store.list(this.ownersKey, namespace).find((x) => x.metadata.uid === owner);
    if (found) this.syncSoon(objectKey(found));
  }

  private collectGarbage(namespace: string, uid: string | undefined): void {
    if (!this.stoppedFlag) deleteOwnedPods(this.o.store, this.o.handlers, this.o.pods, namespace, uid);
  }
}

/** A workload controller: an OwnerLoop around the subclass's own `sync`. */
export abstract class OwnerController {
  protected readonly loop: OwnerLoop;

  constructor(o: Omit<OwnerLoopOptions, 'sync'>) {
    this.loop = new OwnerLoop({ ...o, sync: (key) => this.sync(key) });
  }

  start(): void {
    this.loop.start();
  }

  stop(): void {
    this.loop.stop();
  }

  protected abstract sync(key: string): void;
}
