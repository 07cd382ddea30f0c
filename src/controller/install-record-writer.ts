/**
 * Publishes the registration's binding ingress address in the install record (the ConfigMap
 * `<release>-install`, docs/projection.md "Install record"), the only place the forwarders take
 * it from, and the leader's changes to the list of internal Services it created (`internal-services`).
 * A failed write is retried with backoff in the background until it succeeds; changes made
 * meanwhile are folded into the next write (one write carries everything pending). A ConfigMap of
 * that name that is not this install's (someone else created it first) is never overwritten: it
 * is reported instead.
 */
import { isOwnedBy, ROLE_LABEL, type InstallIdentity } from '../binding/identity.js';
import {
  INGRESS_ADDRESS_KEY,
  installRecordConfigMap,
  installRecordName,
  INTERNAL_SERVICES_KEY,
  MAX_RECORDED_INTERNAL_SERVICES,
  OPERATOR_ID_KEY,
  parseRecordedInternalServices,
  type InstallRecord,
} from '../binding/install-record.js';
import { applyRecordedChange } from '../binding/recorded-internal.js';
import { describeError, isAlreadyExists, kinds, retryOnConflict, type KubeClient } from '../kube/index.js';
import type { Logger } from '../log/logger.js';
import { Backoff, type BackoffOptions } from '../time/backoff.js';
import { systemClock, type Clock } from '../time/clock.js';

const WRITE_BACKOFF: BackoffOptions = { initialMs: 500, maxMs: 30_000, jitter: 0.5, resetAfterMs: 120_000 };

class ForeignRecordError extends Error {
  override readonly name = 'ForeignRecordError';
}

/** A change to the `internal-services` list: applied to the list read fresh at write time. */
export interface InternalServicesChange {
  add: readonly string[];
  remove: readonly string[];
}

/** What one write must set: the registration's part, a change to the internal Services, or both. */
interface Pending {
  registration?: InstallRecord;
  internal?: { add: ReadonlySet<string>; remove: ReadonlySet<string> };
}

/** `newer` applied after `older`. */
function mergePending(older: Pending | undefined, newer: Pending | undefined): Pending | undefined {
  if (!older) return newer;
  if (!newer) return older;
  const registration = newer.registration ?? older.registration;
  let internal = newer.internal ?? older.internal;
  if (older.internal && newer.internal) {
    const add = new Set([...older.internal.add].filter((u) => !newer.internal!.remove.has(u)));
    const remove = new Set([...older.internal.remove].filter((u) => !newer.internal!.add.has(u)));
    for (const u of newer.internal.add) add.add(u);
    for (const u of newer.internal.remove) remove.add(u);
    internal = { add, remove };
  }
  return { ...(registration ? { registration } : {}), ...(internal ? { internal } : {}) };
}

export class InstallRecordWriter {
  private desired: Pending | undefined;
  private running = false;
  private idle: (() => void)[] = [];
  private readonly backoff = new Backoff(WRITE_BACKOFF);

  constructor(
    private readonly opts: {
      kube: KubeClient;
      identity: InstallIdentity;
      log: Logger;
      signal: AbortSignal;
      clock?: Clock;
    },
  ) {}

  /** Records `record` as what the ConfigMap must say; returns at once, the write runs in the background. */
  publish(record: InstallRecord): void {
    this.enqueue({ registration: record });
  }

  /**
   * The leader's change to the list of internal Services it created; written in the background
   * together with whatever else is pending (so at most one write per pass, usually fewer).
   */
  recordInternalServices(change: InternalServicesChange): void {
    this.enqueue({ internal: { add: new Set(change.add), remove: new Set(change.remove) } });
  }

  /**
   * Resolves once nothing is pending (or after `timeoutMs`): a leader that stops writes down the
   * internal Services it created first, or its successor would not trust them.
   */
  flush(timeoutMs: number): Promise<void> {
    if (!this.running && !this.desired) return Promise.resolve();
    const clock = this.opts.clock ?? systemClock;
    const stop = new AbortController();
    return Promise.race([
      new Promise<void>((resolve) => this.idle.push(resolve)),
      clock.sleep(timeoutMs, stop.signal),
    ]).finally(() => stop.abort());
  }

  private enqueue(p: Pending): void {
    this.desired = mergePending(this.desired, p);
    if (!this.running) void this.loop();
  }

  private async loop(): Promise<void> {
    this.running = true;
    const clock = this.opts.clock ?? systemClock;
    try {
      while (this.desired && !this.opts.signal.aborted) {
        const pending = this.desired;
        this.desired = undefined;
        try {
          await this.write(pending);
          this.backoff.reset();
        } catch (err) {
          // What failed is written again, with what came meanwhile laid over it.
          this.desired = mergePending(pending, this.desired);
          const error = err instanceof ForeignRecordError ? err.message : describeError(err);
          const delay = this.backoff.next(clock.now(), clock.random());
          this.opts.log.error(
            { configmap: installRecordName(this.opts.identity), error, retry_in_ms: delay },
            'install record not written',
          );
          await clock.sleep(delay, this.opts.signal);
        }
      }
    } finally {
      this.running = false;
      if (!this.desired) for (const resolve of this.idle.splice(0)) resolve();
    }
  }

  private async write(pending: Pending): Promise<void> {
    const { kube, identity, log, signal } = this.opts;
    const name = installRecordName(identity);
    let listed: { uids: string[]; dropped: number } | undefined;
    // A concurrent writer (a second replica's last write, a create race) means: read again.
    const operation = await retryOnConflict(
      async (): Promise<'created' | 'updated' | 'unchanged'> => {
        const existing = await kube.get(kinds.configMap, identity.operatorNamespace, name, { signal });
        if (
          existing &&
          (!isOwnedBy(existing, identity) || existing.metadata.labels?.[ROLE_LABEL] !== 'install-record')
        ) {
          throw new ForeignRecordError(
            `ConfigMap ${identity.operatorNamespace}/${existing.metadata.name} exists without this install's labels; ` +
              'delete it so the controller can write the install record',
          );
        }
        // The change is applied to the list read now, not to the one the leader saw: a list a
        // previous leader wrote a moment ago keeps its entries.
        listed = undefined;
        if (pending.internal) {
          const current = parseRecordedInternalServices(existing);
          listed = applyRecordedChange(
            current.ok ? current.uids : [],
            pending.internal,
            MAX_RECORDED_INTERNAL_SERVICES,
          );
        }
        const want = installRecordConfigMap(identity, {
          ...pending.registration,
          ...(listed ? { internalServices: listed.uids } : {}),
        });
        if (!existing) {
          await kube.create(kinds.configMap, want, { signal });
          return 'created';
        }
        const labels = { ...existing.metadata.labels, ...want.metadata.labels };
        // Each part replaces its own keys whole (a key the registration no longer has must go);
        // the part this write does not carry is kept as it is.
        const data: Record<string, string> = { ...existing.data };
        if (pending.registration) {
          delete data[INGRESS_ADDRESS_KEY];
          delete data[OPERATOR_ID_KEY];
        }
        if (listed) delete data[INTERNAL_SERVICES_KEY];
        Object.assign(data, want.data);
        if (sameStrings(existing.data ?? {}, data) && sameStrings(existing.metadata.labels ?? {}, labels)) {
          return 'unchanged';
        }
        // The resourceVersion read above is the precondition.
        await kube.replace(
          kinds.configMap,
          { ...existing, metadata: { ...existing.metadata, labels }, data },
          { signal },
        );
        return 'updated';
      },
      { attempts: 5, alsoRetry: isAlreadyExists },
    );
    if (listed && listed.dropped > 0) {
      log.error(
        { configmap: name, dropped: listed.dropped, max: MAX_RECORDED_INTERNAL_SERVICES },
        'install record full: internal Services not listed',
      );
    }
    if (operation !== 'unchanged') {
      log.info(
        {
          configmap: name,
          operation,
          ...(pending.registration
            ? {
                ingress: pending.registration.ingressAddress ?? null,
                operatorId: pending.registration.operatorId ?? null,
              }
            : {}),
          ...(listed ? { internalServices: listed.uids.length } : {}),
        },
        'install record written',
      );
    }
  }
}

function sameStrings(a: Record<string, string>, b: Record<string, string>): boolean {
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => b[k] === a[k]);
}
