import type { ListenerSet } from '../listeners.js';
import type { ForwarderBase } from './base.js';
import type { ForwarderCaches } from './caches.js';
import type { IngressChecks } from './ingress-checks.js';
import type { IngressDestination } from './ingress-destination.js';

export interface Readiness {
  ready: boolean;
  /** Why not ready (empty when ready): each names the cause, e.g. a port and its bind error. */
  reasons: string[];
}

export interface ReadinessParts {
  caches: ForwarderCaches;
  destination: IngressDestination;
  checks: IngressChecks;
  listeners: ListenerSet;
}

/**
 * `/readyz` and the `ready` gauge: ready once the caches are listed and the install record read,
 * with an ingress address, a token and a transport the ingress accepts, and every port bound;
 * never again once the shutdown began.
 */
export class ForwarderReadiness {
  private shuttingDown = false;

  constructor(
    private readonly base: ForwarderBase,
    private readonly parts: ReadinessParts,
  ) {}

  check(): Readiness {
    const { caches, destination, checks, listeners } = this.parts;
    const reasons: string[] = [];
    if (this.shuttingDown) reasons.push('shutting down');
    // Between the first sync and the first read of the record the listener set is empty, which must not read as "all bound".
    if (!caches.synced || !destination.recordRead)
      reasons.push('internal Services and the install record not listed yet');
    else if (destination.current.problem !== undefined) reasons.push(destination.current.problem);
    const tokenProblem = checks.authtoken.problem;
    if (tokenProblem !== undefined) reasons.push(tokenProblem);
    const transportProblem = checks.transport.problem;
    if (transportProblem !== undefined) reasons.push(transportProblem);
    for (const l of listeners.status()) {
      if (l.state !== 'bound')
        reasons.push(`port ${l.port} (${l.url}) ${l.state}${l.error ? `: ${l.error}` : ''}`);
    }
    return { ready: reasons.length === 0, reasons };
  }

  /** Sets the `ready` gauge to what `check()` says now. */
  publish(): void {
    this.base.metrics.ready.set(this.check().ready ? 1 : 0);
  }

  /** Unready from now on (SIGTERM or `stop()`). */
  shutDown(): void {
    this.shuttingDown = true;
    this.base.metrics.ready.set(0);
  }
}
