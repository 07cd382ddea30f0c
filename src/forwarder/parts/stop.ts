import type { EventRecorder } from '../../kube/index.js';
import type { ProbeServer } from '../../net/probe-server.js';
import { sleep } from '../../time/clock.js';
import { stopInOrder, throwIfStepFailed, type StopReport } from '../../time/stop-in-order.js';
import type { FileWatch } from '../file-watch.js';
import type { ListenerSet } from '../listeners.js';
import type { TurnedAway } from '../turned-away.js';
import type { ForwarderBase } from './base.js';
import type { ForwarderCaches } from './caches.js';
import type { IngressChecks } from './ingress-checks.js';
import type { IngressDials } from './ingress-dials.js';
import type { ForwarderReadiness } from './readiness.js';

/**
 * `finish`'s steps (the end of both `stop()` and `shutdown()`) in the order they run
 * (docs/forwarder.md, "Stop order", says why). Every step runs even when an earlier one failed;
 * the stop then rejects naming the failed steps.
 */
export const FORWARDER_STOP_ORDER = [
  'stop accepting',
  'drain connections',
  'stop file watches',
  'stop authtoken checks',
  'stop transport checks',
  'stop turned-away log',
  'destroy ingress sessions',
  'stop event recorder',
  'stop caches and HTTP server',
  'log stopped',
] as const;

/** How long the accept queue must stay empty before the listeners close. */
export const DRAIN_QUIET_MS = 1000;

/**
 * After the drain delay, keeps accepting while connections still arrive (until none came for
 * DRAIN_QUIET_MS, at most `limitMs`): closing a listener resets whatever waits in its accept
 * queue, and a connection that still arrives means the cluster still routes here. Returns how
 * long it kept accepting past the delay (0 when nothing arrived lately).
 */
async function acceptWhileArriving(
  listeners: ListenerSet,
  limitMs: number,
  signal: AbortSignal,
): Promise<number> {
  const start = Date.now();
  for (;;) {
    const now = Date.now();
    const quietFor = now - listeners.lastArrivalAt();
    if (signal.aborted || quietFor >= DRAIN_QUIET_MS || now - start >= limitMs) return now - start;
    await sleep(Math.min(DRAIN_QUIET_MS - quietFor, limitMs - (now - start)), signal);
  }
}

export interface StopParts {
  listeners: ListenerSet;
  readiness: ForwarderReadiness;
  watches: readonly FileWatch[];
  checks: IngressChecks;
  turnedAway: TurnedAway;
  dials: IngressDials;
  events: EventRecorder;
  caches: ForwarderCaches;
  http: ProbeServer;
}

/**
 * The forwarder's two ends: `shutdown()`, the SIGTERM sequence (unready at once, keep accepting
 * for `drain.delaySeconds` and while connections still arrive, then drain), and `stop()`, at once.
 * Both end in FORWARDER_STOP_ORDER; whichever comes first is the one both return.
 */
export class ForwarderStop {
  /** Aborted by `stop()`: a shutdown under way skips its waits and drains nothing more. */
  private readonly abort = new AbortController();
  private final: Promise<void> | undefined;

  constructor(
    private readonly base: ForwarderBase,
    private readonly parts: StopParts,
  ) {}

  shutdown(): Promise<void> {
    if (this.final) return this.final;
    const { drain } = this.base.config;
    this.parts.readiness.shutDown();
    this.base.log.info(
      { delay_seconds: drain.delaySeconds, timeout_seconds: drain.timeoutSeconds },
      'forwarder shutting down',
    );
    this.final = this.drainThenFinish();
    return this.final;
  }

  stop(): Promise<void> {
    this.parts.readiness.shutDown();
    this.abort.abort();
    return (this.final ??= this.finish(0).then(throwIfStepFailed));
  }

  private async drainThenFinish(): Promise<void> {
    const { config, log } = this.base;
    const { listeners } = this.parts;
    const { signal } = this.abort;
    const arrivalsAtSignal = listeners.arrivals();
    await sleep(config.drain.delaySeconds * 1000, signal);
    const timeoutMs = config.drain.timeoutSeconds * 1000;
    const arrivalsAtDelayEnd = listeners.arrivals();
    const extendedMs = await acceptWhileArriving(listeners, timeoutMs / 2, signal);
    const late = listeners.arrivals() - arrivalsAtDelayEnd;
    log.info({ connections: listeners.openConnections() }, 'forwarder stopped accepting');
    if (late > 0)
      log.warn(
        {
          extended_ms: extendedMs,
          late_connections: late,
          connections_since_signal: listeners.arrivals() - arrivalsAtSignal,
          problem: `connections still arrived ${config.drain.delaySeconds} s after SIGTERM, so the cluster kept routing to this pod longer than drain.delaySeconds; raise forwarder.drain.delaySeconds`,
        },
        'forwarder accepted past the drain delay',
      );
    throwIfStepFailed(await this.finish(signal.aborted ? 0 : timeoutMs - extendedMs));
  }

  private finish(drainMs: number): Promise<StopReport<(typeof FORWARDER_STOP_ORDER)[number]>> {
    const { log } = this.base;
    const { listeners, watches, checks, turnedAway, dials, events, caches, http } = this.parts;
    return stopInOrder(FORWARDER_STOP_ORDER, {
      'stop accepting': () => listeners.stopAccepting(),
      'drain connections': () => listeners.drain(drainMs, this.abort.signal),
      'stop file watches': () => watches.forEach((w) => w.stop()),
      'stop authtoken checks': () => checks.authtoken.stop(),
      'stop transport checks': () => checks.transport.stop(),
      'stop turned-away log': () => turnedAway.stop(),
      'destroy ingress sessions': () => dials.destroy(),
      'stop event recorder': () => events.stop(1_000),
      'stop caches and HTTP server': () => Promise.all([caches.stop(), http.close()]),
      'log stopped': () => log.info({}, 'forwarder stopped'),
    });
  }
}
