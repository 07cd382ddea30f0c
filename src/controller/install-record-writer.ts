/**
 * Publishes the registration's binding ingress address in the install record (the ConfigMap
 * `<release>-install`, docs/projection.md "Install record"), the only place the forwarders take
 * it from. Called after every (re-)registration; a failed write is retried with backoff in the
 * background until it succeeds or a newer record replaces it. A ConfigMap of that name that is not
 * this install's (someone else created it first) is never overwritten: it is reported instead.
 */
import { isOwnedBy, ROLE_LABEL, type InstallIdentity } from '../binding/identity.js';
import {
  INGRESS_ADDRESS_KEY,
  installRecordConfigMap,
  installRecordName,
  INTERNAL_SERVICES_KEY,
  OPERATOR_ID_KEY,
  parseInstallRecord,
  type InstallRecord,
} from '../binding/install-record.js';
import { describeError, isAlreadyExists, kinds, retryOnConflict, type KubeClient } from '../kube/index.js';
import type { Logger } from '../log/logger.js';
import { Backoff, type BackoffOptions } from '../time/backoff.js';
import { systemClock, type Clock } from '../time/clock.js';

const WRITE_BACKOFF: BackoffOptions = { initialMs: 500, maxMs: 30_000, jitter: 0.5, resetAfterMs: 120_000 };

class ForeignRecordError extends Error {
  override readonly name = 'ForeignRecordError';
}

/** What one write must set: the registration's part, the internal Services' part, or both. */
interface Pending {
  registration?: InstallRecord;
  internalServices?: readonly string[];
}

export class InstallRecordWriter {
  private desired: Pending | undefined;
  private running = false;
  private internal: { loaded: boolean; uids: ReadonlySet<string> | undefined } = {
    loaded: false,
    uids: undefined,
  };
  private loading = false;
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
    this.desired = { ...this.desired, registration: record };
    if (!this.running) void this.loop();
  }

  /**
   * The internal Services the controller created, as read from the record (`loaded` false until
   * the first read since start or since this replica began leading). `uids` undefined: the record
   * lists none yet (an upgrade), so every labelled internal Service counts until the leader lists them.
   */
  get internalServices(): { loaded: boolean; uids: ReadonlySet<string> | undefined } {
    return this.internal;
  }

  /** Records `uids` as this install's internal Services; written in the background. */
  recordInternalServices(uids: ReadonlySet<string>): void {
    this.internal = { loaded: true, uids };
    this.desired = { ...this.desired, internalServices: [...uids] };
    if (!this.running) void this.loop();
  }

  /**
   * Reads the recorded internal Services again (at start, and when this replica starts leading:
   * another leader may have added some), retrying with backoff; `onLoaded` runs once it has them.
   */
  loadInternalServices(onLoaded: () => void): void {
    this.internal = { loaded: false, uids: this.internal.uids };
    if (this.loading) return;
    this.loading = true;
    void this.load(onLoaded).finally(() => (this.loading = false));
  }

  private async load(onLoaded: () => void): Promise<void> {
    const { kube, identity, log, signal } = this.opts;
    const clock = this.opts.clock ?? systemClock;
    const backoff = new Backoff(WRITE_BACKOFF);
    while (!signal.aborted) {
      try {
        const cm = await kube.get(kinds.configMap, identity.operatorNamespace, installRecordName(identity), {
          signal,
        });
        let uids: ReadonlySet<string> | undefined;
        if (cm && isOwnedBy(cm, identity)) {
          const parsed = parseInstallRecord(cm);
          if (parsed.ok) uids = parsed.record.internalServices && new Set(parsed.record.internalServices);
          // A malformed list trusts no internal Service: the leader lists the ones it writes again.
          else {
            log.error({ configmap: cm.metadata.name, error: parsed.message }, 'install record not read');
            uids = new Set();
          }
        }
        this.internal = { loaded: true, uids };
        onLoaded();
        return;
      } catch (err) {
        const delay = backoff.next(clock.now(), clock.random());
        log.error(
          { configmap: installRecordName(identity), error: describeError(err), retry_in_ms: delay },
          'install record not read',
        );
        await clock.sleep(delay, signal);
      }
    }
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

  private async write(pending: Pending): Promise<void> {
    const { kube, identity, log, signal } = this.opts;
    const record: InstallRecord = {
      ...pending.registration,
      ...(pending.internalServices ? { internalServices: pending.internalServices } : {}),
    };
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
        // Each part replaces its own keys whole (a key the registration no longer has must go);
        // the part this write does not carry is kept as it is.
        const data: Record<string, string> = { ...existing.data };
        if (pending.registration) {
          delete data[INGRESS_ADDRESS_KEY];
          delete data[OPERATOR_ID_KEY];
        }
        if (pending.internalServices) delete data[INTERNAL_SERVICES_KEY];
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
    if (operation !== 'unchanged') {
      log.info(
        {
          configmap: installRecordName(identity),
          operation,
          ingress: record.ingressAddress ?? null,
          operatorId: record.operatorId ?? null,
          internalServices: record.internalServices?.length ?? null,
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
