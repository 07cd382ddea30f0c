import type { Clock } from '../time/clock.js';
import type { EventDecision } from './decide/reporting.js';

/** How often a full recorder queue is looked at again. */
const WAIT_MS = 50;

/**
 * Hands state Events to the recorder no faster than its bounded queue drains (docs/controller.md
 * "Reporting"). The recorder drops what does not fit its queue (256); a first sync that puts
 * thousands of endpoints into a problem state would lose most of their Warnings, and every later
 * leader would send those again (the cluster shows neither them nor the state). Paced, every
 * Warning is written once by the leader that decided it, so a restart finds them and sends none.
 * Only while leading: a replica that stops leading drops its backlog (the next leader decides).
 */
export class EventPacer {
  private backlog: EventDecision[] = [];
  private running = false;

  constructor(
    private readonly o: {
      /** Events the recorder has queued and not written yet. */
      pending: () => number;
      /** Queued events at most (below the recorder's queue size, leaving room for the others). */
      room: number;
      send: (e: EventDecision) => void;
      isLeader: () => boolean;
      clock: Clock;
    },
  ) {}

  /** Events still waiting here (not yet handed to the recorder). */
  get waiting(): number {
    return this.backlog.length;
  }

  push(events: readonly EventDecision[], signal: AbortSignal): void {
    if (events.length === 0) return;
    for (const e of events) this.backlog.push(e);
    if (!this.running) void this.loop(signal);
  }

  private async loop(signal: AbortSignal): Promise<void> {
    this.running = true;
    try {
      while (this.backlog.length > 0 && !signal.aborted) {
        if (!this.o.isLeader()) {
          this.backlog = [];
          return;
        }
        const free = this.o.room - this.o.pending();
        if (free <= 0) {
          await this.o.clock.sleep(WAIT_MS, signal);
          continue;
        }
        for (const e of this.backlog.splice(0, free)) this.o.send(e);
      }
    } finally {
      this.running = false;
    }
  }
}
