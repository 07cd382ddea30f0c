import type { Logger } from '../log/logger.js';
import type { Registry, ResourceDef } from './resources/registry.js';
import { resourceKey } from './resources/registry.js';
import { errors } from './status.js';
import type { Store } from './store.js';
import { isRecord, type KubeObject } from './types.js';

/**
 * Namespace lifecycle: the NamespaceLifecycle admission plugin (no content in a missing or
 * terminating namespace) and the namespace controller (a deleted namespace goes Terminating,
 * then its content is deleted and the namespace disappears), done asynchronously after a delay.
 */

const IMMORTAL = new Set(['default', 'kube-system', 'kube-public']);

export class NamespaceLifecycle {
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(
    private readonly store: Store,
    private readonly registry: Registry,
    private readonly namespaces: ResourceDef,
    private readonly finalizeDelayMs: number,
    private readonly log: Logger,
  ) {}

  private get nsKey(): string {
    return resourceKey(this.namespaces);
  }

  isTerminating(ns: KubeObject): boolean {
    return isRecord(ns.status) && ns.status.phase === 'Terminating';
  }

  /** Admission for a create of `name` in namespace `ns` of resource `def`. */
  admitCreate(def: ResourceDef, ns: string, name: string): void {
    const nsObj = this.store.get(this.nsKey, ns);
    if (!nsObj) throw errors.notFound(this.namespaces, ns);
    if (this.isTerminating(nsObj)) {
      throw errors.forbidden(
        def,
        name,
        `unable to create new content in namespace ${ns} because it is being terminated`,
        [
          {
            reason: 'NamespaceTerminating',
            message: `namespace ${ns} is being terminated`,
            field: 'metadata.namespace',
          },
        ],
      );
    }
  }

  /** The namespace REST Delete: marks Terminating and schedules finalization. Returns the updated object. */
  beginDelete(name: string, preconditionRv?: string, preconditionUid?: string): KubeObject {
    const ns = this.store.get(this.nsKey, name);
    if (!ns) throw errors.notFound(this.namespaces, name);
    if (IMMORTAL.has(name))
      throw errors.forbidden(this.namespaces, name, 'this namespace may not be deleted');
    checkNamespacePreconditions(this.namespaces, ns, preconditionRv, preconditionUid);
    // Already Terminating: the registry answers the namespace as it is, nothing changes.
    if (ns.metadata.deletionTimestamp) return ns;
    ns.metadata.deletionTimestamp = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    ns.status = { ...(isRecord(ns.status) ? ns.status : {}), phase: 'Terminating' };
    const stored = this.store.put(this.nsKey, ns);
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.finalize(name);
    }, this.finalizeDelayMs);
    this.timers.add(timer);
    return stored;
  }

  stop(): void {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }

  private finalize(name: string): void {
    const contents = this.store.contentsOf(name);
    for (const { resource, key } of contents) {
      const removed = this.store.remove(resource, key);
      const def = this.registry.all().find((d) => resourceKey(d) === resource);
      if (removed && def?.afterDelete) def.afterDelete(removed);
    }
    this.store.remove(this.nsKey, name);
    this.log.debug({ namespace: name, removed: contents.length }, 'kubesim: namespace finalized');
  }
}

/**
 * DeleteOptions.preconditions, as rest.BeforeDelete checks them: a mismatch is a 409 Conflict on
 * the Kind (`Service "web"`), naming both values.
 */
export function checkPreconditions(def: ResourceDef, obj: KubeObject, rv?: string, uid?: string): void {
  const onKind = { group: def.group, plural: def.kind };
  if (uid !== undefined && uid !== obj.metadata.uid) {
    throw errors.conflict(
      onKind,
      obj.metadata.name,
      `the UID in the precondition (${uid}) does not match the UID in record (${obj.metadata.uid ?? ''}). The object might have been deleted and then recreated`,
    );
  }
  if (rv !== undefined && rv !== obj.metadata.resourceVersion) {
    throw errors.conflict(
      onKind,
      obj.metadata.name,
      `the ResourceVersion in the precondition (${rv}) does not match the ResourceVersion in record (${obj.metadata.resourceVersion ?? ''}). The object might have been modified`,
    );
  }
}

/** The namespace registry's own precondition check (its Delete is custom): the storage wording, on `namespaces`. */
function checkNamespacePreconditions(def: ResourceDef, ns: KubeObject, rv?: string, uid?: string): void {
  if (uid !== undefined && uid !== ns.metadata.uid) {
    throw errors.conflict(
      def,
      ns.metadata.name,
      `Precondition failed: UID in precondition: ${uid}, UID in object meta: ${ns.metadata.uid ?? ''}`,
    );
  }
  if (rv !== undefined && rv !== ns.metadata.resourceVersion) {
    throw errors.conflict(
      def,
      ns.metadata.name,
      `Precondition failed: ResourceVersion in precondition: ${rv}, ResourceVersion in object meta: ${ns.metadata.resourceVersion ?? ''}`,
    );
  }
}
