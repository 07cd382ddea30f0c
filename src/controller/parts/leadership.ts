import { LeaderElector, type KubeTransport } from '../../kube/index.js';
import { Notice } from '../../time/notice.js';
import type { ClusterState } from '../cluster.js';
import { leadership as leadershipOf, type LeadershipView } from '../decide/status-leader.js';
import type { ControllerBase } from './base.js';

export interface LeadershipParts {
  transport: KubeTransport;
  /** Whether the operator namespace exists is read from its Namespace cache. */
  cluster: ClusterState;
  /** Overrides the elector's identity (tests). */
  identity?: string | undefined;
}

/**
 * Who writes: the Lease `<release>-controller` (or this replica alone when leader election is
 * off), when this replica's term began, who holds the Lease and why this replica cannot lead.
 * It owns the campaign loop and the "cannot lead" warning loop.
 */
export class Leadership {
  private readonly elector: LeaderElector | undefined;
  /** When this replica's leadership term began: deletes need a complete listing made since then. */
  private startedAt: number | undefined;
  private readonly started = new Notice();
  private readonly leaseName: string;

  constructor(
    private readonly base: ControllerBase,
    private readonly parts: LeadershipParts,
  ) {
    const { config, log, clock, registry, queue } = base;
    this.leaseName = `${config.releaseName}-controller`;
    this.startedAt = config.leaderElection.enabled ? undefined : clock.now();
    this.elector = config.leaderElection.enabled
      ? new LeaderElector({
          transport: parts.transport,
          namespace: config.operatorNamespace,
          name: this.leaseName,
          ...(parts.identity ? { identity: parts.identity } : {}),
          logger: log.child({ component: 'leader' }),
          metrics: registry,
          leaseDurationMs: config.leaderElection.leaseDurationSeconds * 1000,
          renewDeadlineMs: config.leaderElection.renewDeadlineSeconds * 1000,
          retryPeriodMs: config.leaderElection.retryPeriodSeconds * 1000,
          onStartedLeading: () => {
            this.startedAt = clock.now();
            log.info({}, 'leading: this replica now writes; deletes wait for a complete listing of its own');
            this.started.tell();
            queue.requestPass();
          },
          onStoppedLeading: () => {
            this.startedAt = undefined;
            log.warn({}, 'stopped leading: this replica writes nothing');
          },
        })
      : undefined;
  }

  isLeader(): boolean {
    return this.elector ? this.elector.isLeader() : true;
  }

  /** When the current term began, as last set (also while the elector is between terms). */
  term(): number | undefined {
    return this.startedAt;
  }

  /** When this replica's current leadership term began; undefined while not leading. */
  leaderTermStart(): number | undefined {
    return this.isLeader() ? this.startedAt : undefined;
  }

  /** `listener` runs each time this replica starts leading, after the term is set. */
  onStartedLeading(listener: () => void): void {
    this.started.subscribe(listener);
  }

  /** Who leads and since when, and why this replica cannot (`/status`, `/readyz`). */
  view(): LeadershipView {
    const { elector } = this;
    const rec = elector?.observedRecord();
    return leadershipOf({
      enabled: elector !== undefined,
      identity: elector?.identity ?? 'this replica',
      leading: this.isLeader(),
      lease: rec
        ? {
            holder: rec.holderIdentity,
            acquireTime: rec.acquireTime,
            renewTime: rec.renewTime,
            leaseDurationSeconds: rec.leaseDurationSeconds,
          }
        : undefined,
      lastError: elector?.lastError(),
      namespace: this.base.config.operatorNamespace,
      leaseName: this.leaseName,
      namespaceExists: this.operatorNamespaceExists(),
      nowMs: Date.now(),
    });
  }

  /** Whether the operator namespace exists as the cache shows it; undefined until the cache synced. */
  private operatorNamespaceExists(): boolean | undefined {
    const namespaces = this.parts.cluster.namespaces;
    return namespaces.synced
      ? namespaces.get(undefined, this.base.config.operatorNamespace) !== undefined
      : undefined;
  }

  /** Campaigns until `signal` aborts, again after every lost term (returns at once without election). */
  async campaign(signal: AbortSignal): Promise<void> {
    const { elector } = this;
    if (!elector) return;
    while (!signal.aborted) {
      const outcome = await elector.run(signal);
      if (outcome !== 'lost') return;
      this.base.log.warn({}, 'leadership lost; campaigning again');
    }
  }

  /** A replica that cannot lead says why: at once when the reason changes, then at least once a minute. */
  async warnWhileUnableToLead(signal: AbortSignal): Promise<void> {
    const { clock, log } = this.base;
    let last = '';
    let lastAt = -Infinity;
    while (!signal.aborted) {
      const reasons = this.view().cannotLead;
      const text = reasons.join('; ');
      if (text && (text !== last || clock.now() - lastAt >= 60_000)) {
        log.warn({ reasons }, 'this replica cannot lead');
        lastAt = clock.now();
      }
      last = text;
      try {
        await clock.sleep(5_000, signal);
      } catch {
        return;
      }
    }
  }

  /** Gives the Lease up so another replica takes over at once (nothing without election). */
  async release(): Promise<void> {
    await this.elector?.release().catch(() => undefined);
  }
}
