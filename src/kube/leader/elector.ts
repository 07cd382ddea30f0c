import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { KubeConfig } from '@kubernetes/client-node';
import type { Registry } from 'prom-client';
import type { Logger } from '../../log/logger.js';
import { systemClock, type Clock } from '../clock.js';
import { describeError } from '../errors.js';
import { kubeMetrics, type KubeMetrics } from '../metrics.js';
import { KubeTransport } from '../transport.js';
import { LeaseLock, type LockedRecord } from './lease-lock.js';
import { claimRecord, decide, observe, releaseRecord, type Observation } from './record.js';

export interface LeaderElectionTiming {
  /** How long followers wait, from their last observed change, before taking over; 15 s. */
  leaseDurationMs: number;
  /** A leader that could not renew for this long stops leading; 10 s. */
  renewDeadlineMs: number;
  /** Time between attempts (acquire is jittered by up to 1.2x); 2 s. */
  retryPeriodMs: number;
}

export const defaultLeaderElectionTiming: LeaderElectionTiming = {
  leaseDurationMs: 15_000,
  renewDeadlineMs: 10_000,
  retryPeriodMs: 2_000,
};

export interface LeaderElectorOptions extends Partial<LeaderElectionTiming> {
  kubeConfig?: KubeConfig;
  transport?: KubeTransport;
  namespace: string;
  /** Lease name, fixed per install. */
  name: string;
  /** Defaults to `defaultIdentity()`. */
  identity?: string;
  logger: Logger;
  metrics?: Registry;
  clock?: Clock;
  /**
   * Called once leadership is acquired. `signal` aborts when leadership ends (lost, released or
   * cancelled). A returned promise is awaited (up to renewDeadline) before the lease is released.
   */
  onStartedLeading: (signal: AbortSignal) => void | Promise<void>;
  /** Called once after leadership ends (only if it had started). */
  onStoppedLeading?: () => void;
  /** Called when a different holder is observed. */
  onNewLeader?: (identity: string) => void;
  /** Release the lease when `run`'s signal aborts; default true. */
  releaseOnCancel?: boolean;
}

/** Pod name (POD_NAME, else the hostname) plus a random suffix, as client-go recommends. */
export function defaultIdentity(): string {
  const base = process.env['POD_NAME'] || hostname();
  return `${base}_${randomBytes(4).toString('hex')}`;
}

export type ElectorOutcome = 'lost' | 'cancelled' | 'released';

/**
 * Lease-based leader election with client-go semantics. `run()` campaigns until it leads, then
 * renews every retryPeriod; if no renewal succeeds within renewDeadline it aborts the work signal,
 * calls onStoppedLeading and returns 'lost' (the caller should exit: a new `run` is allowed but
 * a fresh process is safer).
 */
export class LeaderElector {
  readonly identity: string;
  private readonly lock: LeaseLock;
  private readonly timing: LeaderElectionTiming;
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly m: KubeMetrics;
  private readonly leaseLabel: string;
  private observed: Observation | undefined;
  private leading = false;
  private lastHolder: string | undefined;
  private runCtl: AbortController | undefined;
  private running: Promise<ElectorOutcome> | undefined;
  private releaseRequested = false;

  constructor(private readonly opts: LeaderElectorOptions) {
    if (!opts.transport && !opts.kubeConfig) throw new Error('LeaderElector needs kubeConfig or transport');
    const transport = opts.transport ?? new KubeTransport(opts.kubeConfig as KubeConfig);
    this.lock = new LeaseLock(transport, opts.namespace, opts.name);
    this.timing = {
      leaseDurationMs: opts.leaseDurationMs ?? defaultLeaderElectionTiming.leaseDurationMs,
      renewDeadlineMs: opts.renewDeadlineMs ?? defaultLeaderElectionTiming.renewDeadlineMs,
      retryPeriodMs: opts.retryPeriodMs ?? defaultLeaderElectionTiming.retryPeriodMs,
    };
    if (this.timing.leaseDurationMs <= this.timing.renewDeadlineMs) {
      throw new Error('leaseDuration must be greater than renewDeadline');
    }
    if (this.timing.renewDeadlineMs <= this.timing.retryPeriodMs) {
      throw new Error('renewDeadline must be greater than retryPeriod');
    }
    this.identity = opts.identity ?? defaultIdentity();
    this.clock = opts.clock ?? systemClock;
    this.leaseLabel = this.lock.describe;
    this.log = opts.logger.child({ lease: this.leaseLabel, identity: this.identity });
    this.m = kubeMetrics(opts.metrics);
    this.m.leaderStatus.set({ lease: this.leaseLabel }, 0);
  }

  isLeader(): boolean {
    return this.leading;
  }

  /** The holder we last observed (may be us), or undefined. */
  leader(): string | undefined {
    return this.observed?.record.holderIdentity || undefined;
  }

  /** Campaigns, leads, and resolves when leadership ends or `signal` aborts. */
  run(signal?: AbortSignal): Promise<ElectorOutcome> {
    if (this.running) throw new Error('LeaderElector.run is already running');
    const ctl = new AbortController();
    this.runCtl = ctl;
    this.releaseRequested = false;
    const onAbort = (): void => ctl.abort('cancelled');
    if (signal?.aborted) ctl.abort('cancelled');
    signal?.addEventListener('abort', onAbort, { once: true });
    this.running = this.campaign(ctl.signal).finally(() => {
      signal?.removeEventListener('abort', onAbort);
      this.running = undefined;
      this.runCtl = undefined;
    });
    return this.running;
  }

  /**
   * Steps down (for SIGTERM): stops the work, then clears holderIdentity and sets a 1 s duration
   * so another replica takes over at once. Resolves once done; safe to call when not leading.
   */
  async release(): Promise<void> {
    this.releaseRequested = true;
    this.runCtl?.abort('released');
    await this.running?.catch(() => undefined);
  }

  private async campaign(signal: AbortSignal): Promise<ElectorOutcome> {
    this.log.info({}, 'leader election started');
    while (!signal.aborted) {
      const attempt = AbortSignal.any([signal, AbortSignal.timeout(this.timing.renewDeadlineMs)]);
      if (await this.tryAcquireOrRenew(attempt)) break;
      const r = this.timing.retryPeriodMs;
      await this.clock.sleep(r + r * 1.2 * this.clock.random(), signal);
    }
    if (signal.aborted) return this.releaseRequested ? 'released' : 'cancelled';
    return this.lead(signal);
  }

  private async lead(signal: AbortSignal): Promise<ElectorOutcome> {
    this.leading = true;
    this.m.leaderStatus.set({ lease: this.leaseLabel }, 1);
    this.m.leaderTransitions.inc({ lease: this.leaseLabel, event: 'started' });
    this.log.info({}, 'leader election acquired lease');
    const work = new AbortController();
    let workDone: Promise<void> = Promise.resolve();
    try {
      const r = this.opts.onStartedLeading(work.signal);
      if (r instanceof Promise) {
        workDone = r.then(
          () => undefined,
          (err: unknown) => this.log.error({ ...describeError(err) }, 'leader election work failed'),
        );
      }
    } catch (err) {
      this.log.error({ ...describeError(err) }, 'leader election work failed');
    }

    let outcome: ElectorOutcome = 'lost';
    let lastRenew = this.clock.now();
    renewLoop: while (!signal.aborted) {
      await this.clock.sleep(this.timing.retryPeriodMs, signal);
      if (signal.aborted) break;
      for (;;) {
        const remaining = lastRenew + this.timing.renewDeadlineMs - this.clock.now();
        if (remaining <= 0) break renewLoop;
        const attempt = AbortSignal.any([signal, AbortSignal.timeout(Math.max(1, remaining))]);
        if (await this.tryAcquireOrRenew(attempt)) {
          lastRenew = this.clock.now();
          continue renewLoop;
        }
        if (signal.aborted) break renewLoop;
        const left = lastRenew + this.timing.renewDeadlineMs - this.clock.now();
        await this.clock.sleep(Math.min(this.timing.retryPeriodMs, Math.max(0, left)), signal);
        if (signal.aborted) break renewLoop;
      }
    }
    if (signal.aborted) outcome = this.releaseRequested ? 'released' : 'cancelled';
    else this.log.warn({ renewDeadlineMs: this.timing.renewDeadlineMs }, 'leader election lost lease');

    // Stop the work first, so two leaders never overlap once the lease is released.
    work.abort(outcome);
    this.leading = false;
    this.m.leaderStatus.set({ lease: this.leaseLabel }, 0);
    this.m.leaderTransitions.inc({ lease: this.leaseLabel, event: 'stopped' });
    const grace = new AbortController();
    await Promise.race([workDone, this.clock.sleep(this.timing.renewDeadlineMs, grace.signal)]);
    grace.abort();
    try {
      this.opts.onStoppedLeading?.();
    } catch (err) {
      this.log.error({ ...describeError(err) }, 'leader election onStoppedLeading threw');
    }
    if (outcome === 'released' || (outcome === 'cancelled' && this.opts.releaseOnCancel !== false)) {
      await this.releaseLease();
    }
    this.log.info({ outcome }, 'leader election stopped leading');
    return outcome;
  }

  /** One attempt; true when we hold the lease afterwards. Never throws. */
  private async tryAcquireOrRenew(signal: AbortSignal): Promise<boolean> {
    const now = this.clock.now();
    try {
      const cur = await this.lock.get(signal);
      if (!cur) {
        const created = await this.lock.create(
          claimRecord(undefined, this.identity, now, this.timing.leaseDurationMs),
          signal,
        );
        this.accept(created, now);
        return true;
      }
      this.observed = observe(this.observed, cur.record, now);
      this.noteHolder(cur.record.holderIdentity);
      const d = decide(this.observed, this.identity, now, this.timing.leaseDurationMs);
      if (d.action === 'follow') return false;
      const updated = await this.lock.update(cur, d.record, signal);
      if (d.action === 'acquire')
        this.log.info({ previous: cur.record.holderIdentity }, 'leader election took over lease');
      this.accept(updated, this.clock.now());
      return true;
    } catch (err) {
      const d = describeError(err);
      this.log.debug({ ...d, leading: this.leading }, 'leader election attempt failed');
      if (this.leading && d.errorKind !== 'conflict') {
        this.log.warn({ ...d }, 'leader election renew failed');
      }
      return false;
    }
  }

  private accept(rec: LockedRecord, now: number): void {
    this.observed = { record: rec.record, observedAt: now };
    this.noteHolder(rec.record.holderIdentity);
  }

  private noteHolder(holder: string): void {
    if (holder !== this.lastHolder) {
      this.lastHolder = holder;
      if (holder && holder !== this.identity) {
        this.log.info({ holder }, 'leader election new leader observed');
        try {
          this.opts.onNewLeader?.(holder);
        } catch (err) {
          this.log.error({ ...describeError(err) }, 'leader election onNewLeader threw');
        }
      }
    }
  }

  private async releaseLease(): Promise<void> {
    const signal = AbortSignal.timeout(this.timing.renewDeadlineMs);
    try {
      const cur = await this.lock.get(signal);
      if (!cur || cur.record.holderIdentity !== this.identity) return;
      const rec = await this.lock.update(cur, releaseRecord(cur.record, this.clock.now()), signal);
      this.accept(rec, this.clock.now());
      this.log.info({}, 'leader election released lease');
    } catch (err) {
      this.log.warn({ ...describeError(err) }, 'leader election release failed');
    }
  }
}
