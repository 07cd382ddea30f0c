import { recordedInternalOf } from '../../binding/ownership/index.js';
import type { Logger } from '../../log/logger.js';
import { desiredListeners, type DesiredProblem } from '../desired-listeners.js';
import type { ListenerSet } from '../listeners.js';
import type { ForwarderBase } from './base.js';
import type { ForwarderCaches } from './caches.js';
import type { IngressDestination } from './ingress-destination.js';
import type { ForwarderReadiness } from './readiness.js';
import type { UrlDials } from './url-dials.js';

export interface ListenerSyncParts {
  caches: ForwarderCaches;
  destination: IngressDestination;
  listeners: ListenerSet;
  urlDials: UrlDials;
  readiness: ForwarderReadiness;
  /** The forwarder's own ports (its HTTP server's among them): never an allocated port's listener. */
  ownPorts: number[];
}

function logProblem(log: Logger, p: DesiredProblem): void {
  log.warn(
    { service: p.service, kind: p.kind, ...(p.port ? { port: p.port } : {}), problem: p.message },
    'forwarder skipped service',
  );
}

/**
 * Keeps the listener set and the ingress destination equal to what the caches show: on every
 * change of the internal Services or the install record, once per turn of the event loop (cache
 * events come in bursts: the initial list, relists).
 */
export class ListenerSync {
  private scheduled = false;
  private lastProblems = '';

  constructor(
    private readonly base: ForwarderBase,
    private readonly parts: ListenerSyncParts,
  ) {
    parts.caches.onChange(() => this.schedule());
  }

  /** Syncs on the next turn of the event loop, once however often it is asked before. */
  schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.sync());
  }

  private sync(): void {
    const { config, identity, log } = this.base;
    const { caches, destination, listeners } = this.parts;
    this.scheduled = false;
    if (!caches.synced) return;
    const record = caches.record();
    destination.update(record);
    const desired = desiredListeners(caches.services.list(), identity, {
      portRange: config.portRange,
      ownPorts: this.parts.ownPorts.filter((p) => p > 0),
      recorded: recordedInternalOf(record, identity).uids,
    });
    const problemsKey = JSON.stringify(desired.problems);
    if (problemsKey !== this.lastProblems) {
      this.lastProblems = problemsKey;
      for (const p of desired.problems) logProblem(log, p);
    }
    listeners.reconcile(desired.routes);
    this.parts.urlDials.forgetRemoved(listeners.status());
    this.parts.readiness.publish();
  }
}
