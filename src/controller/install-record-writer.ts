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
  INTENTS_KEY,
  INTERNAL_SERVICES_KEY,
  MAX_RECORDED_INTERNAL_SERVICES,
  OPERATOR_ID_KEY,
  parseRecordedIntents,
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
  /** Write-ahead entries (`namespace/name`) to add and to drop (docs/controller.md "Ownership"). */
  addIntents?: readonly string[];
  removeIntents?: readonly string[];
}

interface SetChange {
  add: ReadonlySet<string>;
  remove: ReadonlySet<string>;
}

/** What one write must set: the registration's part, changes to the ownership lists, or all. */
interface Pending {
  registration?: InstallRecord;
  internal?: SetChange;
  intents?: SetChange;
}

/** `newer` applied after `older`. */
function mergeChange(older: SetChange | undefined, newer: SetChange | undefined): SetChange | undefined {
  if (!older || !newer) return newer ?? older;
  const add = new Set([...older.add].filter((u) => !newer.remove.has(u)));
  const remove = new Set([...older.remove].filter((u) => !newer.add.has(u)));
  for (const u of newer.add) add.add(u);
  for (const u of newer.remove) remove.add(u);
  return { add, remove };
}

/** `newer` applied after `older`. */
function mergePending(older: Pending | undefined, newer: Pending | undefined): Pending | undefined {
  if (!older) return newer;
  if (!newer) return older;
  const registration = newer.registration ?? older.registration;
  const internal = mergeChange(older.internal, newer.internal);
  const intents = mergeChange(older.intents, newer.intents);
  return {
    ...(registration ? { registration } : {}),
    ...(internal ? { internal } : {}),
    ...(intents ? { intents } : {}),
  };
}

function setChange(
  add: readonly string[] | undefined,
  remove: readonly string[] | undefined,
): SetChange | undefined {
  if ((add?.length ?? 0) === 0 && (remove?.length ?? 0) === 0) return undefined;
  return { add: new Set(add ?? []), remove: new Set(remove ?? []) };
}

export class InstallRecordWriter {
  private desired: Pending | undefined;
  private running = false;
  private idle: (() => void)[] = [];
  private readonly backoff = new Backoff(WRITE_BACKOFF);
  /** Sequence numbers of what was enqueued and of the last write that succeeded or failed. */
  private enqueued = 0;
  private waiters: { seq: number; resolve: (written: boolean) => void }[] = [];

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
    const internal = setChange(change.add, change.remove);
    const intents = setChange(change.addIntents, change.removeIntents);
    // The first list is written even when empty (a record without one trusts every labelled Service).
    this.enqueue({
      internal: internal ?? { add: new Set(), remove: new Set() },
      ...(intents ? { intents } : {}),
    });
  }

  /**
   * The write-ahead entries of a pass's creates, with whatever else is pending, in one write:
   * resolves true once a write carrying them succeeded, false when that write failed (it is
   * retried in the background; the pass leaves its creates for later) or `signal` aborts.
   */
  writeAhead(intents: readonly string[], signal: AbortSignal): Promise<boolean> {
    this.enqueue({ intents: { add: new Set(intents), remove: new Set() } });
    const seq = this.enqueued;
    return new Promise<boolean>((resolve) => {
      if (signal.aborted) return resolve(false);
      const onAbort = (): void => resolve(false);
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiters.push({
        seq,
        resolve: (written) => {
          signal.removeEventListener('abort', onAbort);
          resolve(written);
        },
      });
    });
  }

  private settle(upTo: number, written: boolean): void {
    const done = this.waiters.filter((w) => w.seq <= upTo);
    this.waiters = this.waiters.filter((w) => w.seq > upTo);
    for (const w of done) w.resolve(written);
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
    this.enqueued++;
    this.desired = mergePending(this.desired, p);
    if (!this.running) void this.loop();
  }

  private async loop(): Promise<void> {
    this.running = true;
    const clock = this.opts.clock ?? systemClock;
    try {
      while (this.desired && !this.opts.signal.aborted) {
        const pending = this.desired;
        const seq = this.enqueued;
        this.desired = undefined;
        try {
          await this.write(pending);
          this.backoff.reset();
          this.settle(seq, true);
        } catch (err) {
          this.settle(seq, false);
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
      if (this.opts.signal.aborted) this.settle(Number.POSITIVE_INFINITY, false);
      if (!this.desired) for (const resolve of this.idle.splice(0)) resolve();
    }
  }

  private async write(pending: Pending): Promise<void> {
    const { kube, identity, log, signal } = this.opts;
    const name = installRecordName(identity);
    let listed: { uids: string[]; dropped: number } | undefined;
    let intents: { uids: string[]; dropped: number } | undefined;
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
        intents = undefined;
        if (pending.intents) {
          const current = parseRecordedIntents(existing);
          intents = applyRecordedChange(
            current.ok ? current.keys : [],
            pending.intents,
            MAX_RECORDED_INTERNAL_SERVICES,
          );
        }
        const want = installRecordConfigMap(identity, {
          ...pending.registration,
          ...(listed ? { internalServices: listed.uids } : {}),
          ...(intents ? { intents: intents.uids } : {}),
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
        if (intents) delete data[INTENTS_KEY];
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
          ...(intents ? { intents: intents.uids.length } : {}),
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
