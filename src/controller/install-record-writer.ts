/**
 * Publishes the registration's binding ingress address in the install record (the ConfigMap
 * `<release>-install`, docs/projection.md "Install record"), the only place the forwarders take
 * it from. Called after every (re-)registration; a failed write is retried with backoff in the
 * background until it succeeds or a newer record replaces it. A ConfigMap of that name that is not
 * this install's (someone else created it first) is never overwritten: it is reported instead.
 */
import { isOwnedBy, ROLE_LABEL, type InstallIdentity } from '../binding/identity.js';
import { installRecordConfigMap, installRecordName, type InstallRecord } from '../binding/install-record.js';
import { describeError, isAlreadyExists, kinds, retryOnConflict, type KubeClient } from '../kube/index.js';
import type { Logger } from '../log/logger.js';
import { Backoff, type BackoffOptions } from '../time/backoff.js';
import { systemClock, type Clock } from '../time/clock.js';

const WRITE_BACKOFF: BackoffOptions = { initialMs: 500, maxMs: 30_000, jitter: 0.5, resetAfterMs: 120_000 };

class ForeignRecordError extends Error {
  override readonly name = 'ForeignRecordError';
}

export class InstallRecordWriter {
  private desired: InstallRecord | undefined;
  private running = false;
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
    this.desired = record;
    if (!this.running) void this.loop();
  }

  private async loop(): Promise<void> {
    this.running = true;
    const clock = this.opts.clock ?? systemClock;
    try {
      while (this.desired && !this.opts.signal.aborted) {
        const record = this.desired;
        try {
          await this.write(record);
          this.backoff.reset();
          if (this.desired === record) this.desired = undefined;
        } catch (err) {
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
    }
  }

  private async write(record: InstallRecord): Promise<void> {
    const { kube, identity, log, signal } = this.opts;
    const want = installRecordConfigMap(identity, record);
    const { namespace, name } = want.metadata;
    // A concurrent writer (a second replica's last write, a create race) means: read again.
    const operation = await retryOnConflict(
      async (): Promise<'created' | 'updated' | 'unchanged'> => {
        const existing = await kube.get(kinds.configMap, namespace, name, { signal });
        if (!existing) {
          await kube.create(kinds.configMap, want, { signal });
          return 'created';
        }
        if (!isOwnedBy(existing, identity) || existing.metadata.labels?.[ROLE_LABEL] !== 'install-record') {
          throw new ForeignRecordError(
            `ConfigMap ${identity.operatorNamespace}/${existing.metadata.name} exists without this install's labels; ` +
              'delete it so the controller can write the install record',
          );
        }
        const labels = { ...existing.metadata.labels, ...want.metadata.labels };
        const data = want.data ?? {};
        if (sameStrings(existing.data ?? {}, data) && sameStrings(existing.metadata.labels ?? {}, labels)) {
          return 'unchanged';
        }
        // The data is replaced whole: a key the registration no longer has must go. The
        // resourceVersion read above is the precondition.
        await kube.replace(
          kinds.configMap,
          { ...existing, metadata: { ...existing.metadata, labels }, data },
          { signal },
        );
        return 'updated';
      },
      { attempts: 5, alsoRetry: isAlreadyExists },
    );
    if (operation !== 'unchanged') {
      log.info(
        {
          configmap: installRecordName(identity),
          operation,
          ingress: record.ingressAddress ?? null,
          operatorId: record.operatorId ?? null,
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
