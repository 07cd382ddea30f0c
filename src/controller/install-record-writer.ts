/**
 * Publishes the registration's binding ingress address in the install record (the ConfigMap
 * `<release>-install`, docs/projection.md "Install record"), the only place the forwarders take
 * it from, and the leader's changes to the list of internal Services it created (`internal-services`).
 * A failed write is retried with backoff in the background until it succeeds; changes made
 * meanwhile are folded into the next write (one write carries everything pending). A ConfigMap of
 * that name that is not this install's (someone else created it first) is never overwritten: it
 * is reported instead.
 */
import {
  installRecordName,
  MAX_RECORDED_INTERNAL_SERVICES,
  mergePending,
  nextInstallRecord,
  pendingOfChange,
  type InstallIdentity,
  type InstallRecord,
  type InternalServicesChange,
  type PendingRecordWrite,
} from '../binding/ownership/index.js';
import { describeError, isAlreadyExists, kinds, retryOnConflict, type KubeClient } from '../kube/index.js';
import type { Logger } from '../log/logger.js';
import { Backoff } from '../time/backoff.js';
import { INSTALL_RECORD_WRITE_CURVE } from '../time/curves.js';
import { systemClock, type Clock } from '../time/clock.js';

class ForeignRecordError extends Error {
  override readonly name = 'ForeignRecordError';
}

export class InstallRecordWriter {
  private desired: PendingRecordWrite | undefined;
  private running = false;
  private idle: (() => void)[] = [];
  private readonly backoff = new Backoff(INSTALL_RECORD_WRITE_CURVE);
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
    this.enqueue(pendingOfChange(change));
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

  private enqueue(p: PendingRecordWrite): void {
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

  private async write(pending: PendingRecordWrite): Promise<void> {
    const { kube, identity, log, signal } = this.opts;
    const name = installRecordName(identity);
    let listed: { uids: string[]; dropped: number } | undefined;
    let intents: { uids: string[]; dropped: number } | undefined;
    // A concurrent writer (a second replica's last write, a create race) means: read again.
    const operation = await retryOnConflict(
      async (): Promise<'created' | 'updated' | 'unchanged'> => {
        const existing = await kube.get(kinds.configMap, identity.operatorNamespace, name, { signal });
        const next = nextInstallRecord(identity, existing, pending);
        if (next.op === 'foreign') throw new ForeignRecordError(next.message);
        listed = next.listed;
        intents = next.intents;
        if (next.op === 'create') {
          await kube.create(kinds.configMap, next.object, { signal });
          return 'created';
        }
        if (next.op === 'unchanged') return 'unchanged';
        // The resourceVersion read above is the precondition.
        await kube.replace(kinds.configMap, next.object, { signal });
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
