import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { KubeConfig } from '@kubernetes/client-node';
import type { Registry } from 'prom-client';
import type { Logger } from '../../log/logger.js';
import { systemClock, type MonotonicClock } from '../../time/clock.js';
import { describeError } from '../errors.js';
import { kubeMetrics, type KubeMetrics } from '../metrics.js';
import { KubeTransport } from '../transport.js';
import { LeaseLock, type LockedRecord } from './lease-lock.js';
import {
  claimRecord,
  decide,
  observe,
  releaseRecord,
  type LeaderElectionRecord,
  type Observation,
} from './record.js';
import { linkedSignal } from './signals.js';
import { LeadershipTerm } from './term.js';
import { UNINSTALLED_AT_ANNOTATION, uninstallObserved } from './uninstall-mark.js';

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
  /** Deadlines and expiry use `monotonicNow()`; wall time (`now()`) only stamps the Lease. */
  clock?: MonotonicClock;
  /**
   * Called once leadership is acquired. `signal` aborts when leadership ends (renew deadline
   * passed, lost, released or cancelled), by a timer of its own, so even while the renew loop
   * waits on a hung request. A returned promise is awaited (up to renewDeadline) before the lease
   * is released. Check `isLeader()` immediately before every write as well: an abort is only
   * delivered when the event loop gets to it.
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

/** `uninstalled`: the Lease carries an uninstall mark; this process never leads again. */
export type ElectorOutcome = 'lost' | 'cancelled' | 'released' | 'uninstalled';

/** Whether an attempt left us holding the lease; `holder` names a foreign holder we observed. */
type Attempt = { held: true } | { held: false; holder?: string; uninstalled?: true };

/**
 * Lease-based leader election with client-go semantics. `run()` campaigns until it leads, then
 * renews every retryPeriod. Leadership is a deadline on the monotonic clock (see
 * `LeadershipTerm`): it ends the instant no renewal *sent* within the last renewDeadline has
 * succeeded; then the work signal aborts, onStoppedLeading runs and `run` returns 'lost' (the
 * caller should exit: a new `run` is allowed but a fresh process is safer).
 */
export class LeaderElector {
  readonly identity: string;
  private readonly lock: LeaseLock;
  private readonly timing: LeaderElectionTiming;
  private readonly clock: MonotonicClock;
  private readonly log: Logger;
  private readonly m: KubeMetrics;
  private readonly leaseLabel: string;
  private observed: Observation | undefined;
  private term: LeadershipTerm | undefined;
  private lastHolder: string | undefined;
  private runCtl: AbortController | undefined;
  private running: Promise<ElectorOutcome> | undefined;
  private releaseRequested = false;
  private lastAttemptError: ReturnType<typeof describeError> | undefined;
  /** The uninstall mark found at the first read of the Lease (a previous install's, if any). */
  private baselineMark: { value: string | undefined } | undefined;
  private stoodDown = false;

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

  /**
   * Whether we lead at this very instant: computed from the monotonic renew deadline, not a
   * cached flag, so it is false as soon as the deadline passes even if the event loop was blocked
   * and no timer (nor the work signal's abort) has run yet. Cheap (one clock read, no side
   * effects): call it immediately before every write.
   */
  isLeader(): boolean {
    return this.term?.holds() ?? false;
  }

  /** Milliseconds of leadership left without another renewal; 0 when not leading. */
  leadershipRemainingMs(): number {
    return this.term?.remainingMs() ?? 0;
  }

  /** The holder we last observed (may be us), or undefined. */
  leader(): string | undefined {
    return this.observed?.record.holderIdentity || undefined;
  }

  /** The Lease record we last observed, or undefined (for status: who leads, since when). */
  observedRecord(): LeaderElectionRecord | undefined {
    return this.observed?.record;
  }

  /** Why the last attempt to read or write the Lease failed; undefined after a success. */
  lastError(): ReturnType<typeof describeError> | undefined {
    return this.lastAttemptError;
  }

  /** Whether an uninstall mark was observed: this process never leads again. */
  uninstalled(): boolean {
    return this.stoodDown;
  }

  /** Campaigns, leads, and resolves when leadership ends or `signal` aborts. */
  run(signal?: AbortSignal): Promise<ElectorOutcome> {
    if (this.running) throw new Error('LeaderElector.run is already running');
    if (this.stoodDown) return Promise.resolve('uninstalled');
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

  private stopReason(): 'released' | 'cancelled' {
    return this.releaseRequested ? 'released' : 'cancelled';
  }

  private mono(): number {
    return this.clock.monotonicNow();
  }

  private async campaign(signal: AbortSignal): Promise<ElectorOutcome> {
    this.log.info({}, 'leader election started');
    const deadlineMs = this.timing.renewDeadlineMs;
    while (!signal.aborted) {
      const sentAt = this.mono();
      const attempt = await this.attempt([signal], deadlineMs);
      if (this.stoodDown) return 'uninstalled';
      if (attempt.held) {
        if (signal.aborted) {
          // Won the lease just as we were told to stop: hand it back rather than sit on it.
          if (this.releaseRequested || this.opts.releaseOnCancel !== false) await this.releaseLease();
          break;
        }
        if (this.mono() < sentAt + deadlineMs) return this.lead(signal, sentAt + deadlineMs);
        this.log.warn(
          { renewDeadlineMs: deadlineMs },
          'leader election acquire landed after the renew deadline',
        );
      }
      const r = this.timing.retryPeriodMs;
      await this.clock.sleep(r + r * 1.2 * this.clock.random(), signal);
    }
    return this.stopReason();
  }

  private async lead(signal: AbortSignal, until: number): Promise<ElectorOutcome> {
    const term = new LeadershipTerm(this.clock, until, () => {
      this.m.leaderStatus.set({ lease: this.leaseLabel }, 0);
      this.log.warn(
        { renewDeadlineMs: this.timing.renewDeadlineMs },
        'leader election renew deadline passed',
      );
    });
    this.term = term;
    this.m.leaderStatus.set({ lease: this.leaseLabel }, 1);
    this.m.leaderTransitions.inc({ lease: this.leaseLabel, event: 'started' });
    this.log.info({}, 'leader election acquired lease');
    const workDone = this.startWork(term.signal);

    const outcome = await this.renewLoop(signal, term);
    if (outcome === 'lost') this.log.warn({}, 'leader election lost lease');

    // Stop the work first, so two leaders never overlap once the lease is released.
    term.end(outcome);
    this.term = undefined;
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
    // Standing down for an uninstall releases nothing: the uninstall holds the Lease.
    if (outcome === 'released' || (outcome === 'cancelled' && this.opts.releaseOnCancel !== false)) {
      await this.releaseLease();
    }
    this.log.info({ outcome }, 'leader election stopped leading');
    return outcome;
  }

  private startWork(signal: AbortSignal): Promise<void> {
    try {
      const r = this.opts.onStartedLeading(signal);
      if (r instanceof Promise) {
        return r.then(
          () => undefined,
          (err: unknown) => this.log.error({ ...describeError(err) }, 'leader election work failed'),
        );
      }
    } catch (err) {
      this.log.error({ ...describeError(err) }, 'leader election work failed');
    }
    return Promise.resolve();
  }

  /**
   * Renews every retryPeriod, retrying failures every retryPeriod, until `signal` aborts or the
   * term ends (deadline passed, or another holder observed).
   */
  private async renewLoop(signal: AbortSignal, term: LeadershipTerm): Promise<ElectorOutcome> {
    const { renewDeadlineMs, retryPeriodMs } = this.timing;
    const stopped = (): boolean => signal.aborted || !term.active();
    while (!stopped()) {
      await this.pause(retryPeriodMs, [signal, term.signal]);
      while (!stopped()) {
        const sentAt = this.mono();
        // The term's signal is the request's deadline: it aborts exactly when leadership ends.
        const attempt = await this.attempt([signal, term.signal]);
        if (!attempt.held && attempt.uninstalled) {
          term.end('uninstalled');
          return 'uninstalled';
        }
        if (attempt.held) {
          if (term.extend(sentAt + renewDeadlineMs)) break;
          this.log.warn({ renewDeadlineMs }, 'leader election renewal landed after the renew deadline');
        } else if (attempt.holder !== undefined && !signal.aborted) {
          this.log.warn({ holder: attempt.holder }, 'leader election lease taken by another holder');
          term.end('lost');
        }
        if (stopped()) break;
        await this.pause(Math.min(retryPeriodMs, term.remainingMs()), [signal, term.signal]);
      }
    }
    return signal.aborted ? this.stopReason() : 'lost';
  }

  private async pause(ms: number, until: AbortSignal[]): Promise<void> {
    const wake = linkedSignal(until);
    await this.clock.sleep(ms, wake.signal);
    wake.dispose();
  }

  /** One tryAcquireOrRenew bounded by `parents` and, if given, `timeoutMs` on our clock. */
  private async attempt(parents: AbortSignal[], timeoutMs?: number): Promise<Attempt> {
    const bound = linkedSignal(
      parents,
      timeoutMs === undefined
        ? undefined
        : { clock: this.clock, ms: timeoutMs, reason: `no answer within ${timeoutMs} ms` },
    );
    try {
      return await this.tryAcquireOrRenew(bound.signal);
    } finally {
      bound.dispose();
    }
  }

  /** client-go's tryAcquireOrRenew. Never throws. */
  private async tryAcquireOrRenew(signal: AbortSignal): Promise<Attempt> {
    const leaseDurationMs = this.timing.leaseDurationMs;
    try {
      const cur = await this.lock.get(signal);
      this.lastAttemptError = undefined;
      if (!cur) {
        this.baselineMark ??= { value: undefined };
        const created = await this.lock.create(
          claimRecord(undefined, this.identity, this.clock.now(), leaseDurationMs),
          signal,
        );
        this.accept(created);
        return { held: true };
      }
      // Observed when the answer arrived: a follower's countdown must not start before the
      // leader's write (whose send time bounds the leader's deadline) could have happened.
      const now = this.mono();
      this.observed = observe(this.observed, cur.record, now, cur.resourceVersion);
      const holder = cur.record.holderIdentity;
      this.noteHolder(holder);
      if (this.markedUninstalled(holder, cur.lease.metadata.annotations?.[UNINSTALLED_AT_ANNOTATION]))
        return { held: false, holder, uninstalled: true };
      if (this.term && holder !== '' && holder !== this.identity) return { held: false, holder };
      const d = decide(this.observed, this.identity, now, leaseDurationMs, this.clock.now());
      if (d.action === 'follow') return { held: false, holder: d.holder };
      const updated = await this.lock.update(cur, d.record, signal);
      if (d.action === 'acquire') this.log.info({ previous: holder }, 'leader election took over lease');
      this.accept(updated);
      return { held: true };
    } catch (err) {
      const d = describeError(err);
      this.lastAttemptError = d;
      const leading = this.term?.holds() ?? false;
      this.log.debug({ ...d, leading }, 'leader election attempt failed');
      if (leading && d.errorKind !== 'conflict') this.log.warn({ ...d }, 'leader election renew failed');
      return { held: false };
    }
  }

  /** Notes the first mark seen; true (and stood down for good) once an uninstall is observed. */
  private markedUninstalled(holder: string, mark: string | undefined): boolean {
    this.baselineMark ??= { value: mark };
    if (this.stoodDown) return true;
    if (!uninstallObserved(this.baselineMark.value, { holder, mark })) return false;
    this.stoodDown = true;
    this.log.warn(
      { holder, uninstalledAt: mark ?? null },
      'leader election stood down: the install was uninstalled',
    );
    return true;
  }

  private accept(rec: LockedRecord): void {
    this.observed = { record: rec.record, observedAt: this.mono(), resourceVersion: rec.resourceVersion };
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
    const ms = this.timing.renewDeadlineMs;
    const bound = linkedSignal([], { clock: this.clock, ms, reason: `no answer within ${ms} ms` });
    try {
      const cur = await this.lock.get(bound.signal);
      if (!cur || cur.record.holderIdentity !== this.identity) return;
      const rec = await this.lock.update(cur, releaseRecord(cur.record, this.clock.now()), bound.signal);
      this.accept(rec);
      this.log.info({}, 'leader election released lease');
    } catch (err) {
      this.log.warn({ ...describeError(err) }, 'leader election release failed');
    } finally {
      bound.dispose();
    }
  }
}
