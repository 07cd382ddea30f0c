import { isOwnedBy, lostLabelDetail } from '../binding/ownership/index.js';
import type { ProjectionConfig } from '../binding/types.js';
import type { Service } from '../kube/index.js';
import type { Logger } from '../log/logger.js';
import type { Clock } from '../time/clock.js';
import type { ServiceApi } from './apply.js';
import { splitKey, type NameRecord } from './decide/name-lookup.js';
import { nameNoted } from './decide/reconciler-memory.js';
import type { QueueOp } from './decide/work-items.js';
import type { ControllerMetrics } from './metrics.js';
import type { ClusterReadModel } from './read-model.js';

/** More unknown names than this in one namespace are read with one list instead of one GET each. */
const SCAN_THRESHOLD = 8;

/**
 * Reads who holds the Service names the projection asks about and this install does not hold
 * (docs/controller.md "Names before the plan"): first inside the pass, before its plan, then as
 * queued rechecks. Each observation goes to the read model; what it means for the work queue
 * (`nameNoted`) is added to the caller's queue calls, never made here.
 */
export class NameReads {
  constructor(
    private readonly o: {
      /** Reads of single names. */
      api: Pick<ServiceApi, 'get'>;
      /** Every Service of a namespace (reading many names at once). */
      listServices: (namespace: string, signal: AbortSignal) => Promise<Service[]>;
      cluster: ClusterReadModel;
      config: () => ProjectionConfig;
      metrics: ControllerMetrics;
      log: Logger;
      clock: Clock;
      /** Reads in flight at once. */
      concurrency: number;
    },
  ) {}

  /**
   * First reads, inside the pass: a GET per name, or one list of the namespace when it has more
   * than SCAN_THRESHOLD of them; as many at once as writes.
   */
  async readFirst(keys: readonly string[], out: QueueOp[], signal: AbortSignal): Promise<void> {
    const byNamespace = new Map<string, string[]>();
    for (const key of keys) {
      const [ns] = splitKey(key);
      const list = byNamespace.get(ns);
      if (list) list.push(key);
      else byNamespace.set(ns, [key]);
    }
    const reads: (() => Promise<unknown>)[] = [];
    for (const [ns, list] of byNamespace) {
      if (list.length > SCAN_THRESHOLD) reads.push(() => this.readNamespace(ns, list, out, signal));
      else for (const key of list) reads.push(() => this.readName(key, out, signal));
    }
    let next = 0;
    const reader = async (): Promise<void> => {
      while (next < reads.length && !signal.aborted) await reads[next++]!();
    };
    await Promise.all(
      Array.from({ length: Math.min(reads.length, Math.max(1, this.o.concurrency)) }, reader),
    );
  }

  /** Reads who holds one name and records it; true when what is known about it changed. */
  async readName(key: string, out: QueueOp[], signal: AbortSignal): Promise<boolean> {
    const [namespace, name] = splitKey(key);
    let seen: NameRecord['holder'];
    let detail: string | undefined;
    try {
      const live = await this.o.api.get(namespace, name, signal);
      const identity = this.o.config().identity;
      seen = !live || isOwnedBy(live, identity) ? 'free' : 'foreign';
      if (live && seen === 'foreign') detail = lostLabelDetail(live, identity);
      this.o.metrics.kubeReads.inc({ op: 'get', result: 'ok' });
    } catch (err) {
      if (signal.aborted) return false;
      this.o.metrics.kubeReads.inc({ op: 'get', result: 'error' });
      this.o.log.warn(
        { service: key, error: err instanceof Error ? err.message : String(err) },
        'reading a Service name failed; planning it as free and reading it again',
      );
      seen = 'unread';
    }
    return this.note(key, seen, detail, out);
  }

  /** The same for many names of one namespace, with one list. */
  private async readNamespace(
    namespace: string,
    keys: readonly string[],
    out: QueueOp[],
    signal: AbortSignal,
  ): Promise<boolean> {
    let held: Map<string, Service> | undefined;
    try {
      held = new Map((await this.o.listServices(namespace, signal)).map((s) => [s.metadata.name, s]));
      this.o.metrics.kubeReads.inc({ op: 'list', result: 'ok' });
    } catch (err) {
      if (signal.aborted) return false;
      this.o.metrics.kubeReads.inc({ op: 'list', result: 'error' });
      this.o.log.warn(
        { namespace, names: keys.length, error: err instanceof Error ? err.message : String(err) },
        'listing the Services of a namespace failed; planning its names as free and reading them again',
      );
    }
    let changed = false;
    const identity = this.o.config().identity;
    for (const key of keys) {
      const live = held?.get(splitKey(key)[1]);
      const seen = !held ? 'unread' : !live || isOwnedBy(live, identity) ? 'free' : 'foreign';
      const detail = live && seen === 'foreign' ? lostLabelDetail(live, identity) : undefined;
      if (this.note(key, seen, detail, out)) changed = true;
    }
    return changed;
  }

  /** Records one observation of a name; what it means for the queue is decided by `nameNoted`. */
  private note(key: string, seen: NameRecord['holder'], detail: string | undefined, out: QueueOp[]): boolean {
    const { cluster } = this.o;
    const before = cluster.name(key);
    const changed = cluster.recordName(key, seen, this.o.clock.now(), detail);
    const noted = nameNoted(key, before, cluster.name(key), detail);
    for (const l of noted.log) this.o.log[l.level](l.fields, l.msg);
    for (const op of noted.queue) out.push(op);
    return changed;
  }
}
