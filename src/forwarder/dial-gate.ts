import type { CancelSignal } from '../api/ingress/cancel.js';

/**
 * Admission to the binding ingress, shared fairly between ports (one endpoint never costs
 * another). Two budgets:
 *
 * - *handshakes*: ingress connections being opened at once (TCP, TLS, preface written), all ports
 *   together (`limits.maxConcurrentDials`). A turn ends as soon as the transport is up and the
 *   preface is sent, not when the ingress answers: waiting for the ingress's upstream connect
 *   (seconds for an upstream that drops SYNs) costs the forwarder nothing, so it holds no turn.
 * - *ingress connections*: those a port holds (`limits.maxIngressConnectionsPerPort`) and those
 *   one client address holds (`limits.maxIngressConnectionsPerSource`), from the grant until the
 *   connection is over. Both sit below the ingress's own budget, so one endpoint's clients (or one
 *   pod) cannot take every slot of the ingress.
 *
 * Waiting clients queue per port, and turns go round-robin over the ports with someone waiting:
 * 400 clients of a broken endpoint queue behind each other, not in front of the next endpoint's
 * first client. A client that needs another attempt (ERR_730/731 and other transient refusals)
 * asks again and joins the back of its own port's queue.
 */

/**
 * The handshake window follows the round trip: a turn lasts a handshake (two round trips over
 * TLS), so a fixed number of turns caps the dial rate at turns / handshake time (64 turns at
 * 200 ms RTT: 160 dials/s). The window starts at INITIAL_WINDOW turns (or the configured maximum
 * when smaller), grows by one turn per handshake completed while clients wait (doubling per
 * round trip), up to `limits.maxConcurrentDials`, and shrinks by a quarter, never below where it
 * started, when the ingress says it has too many handshakes from us (ERR_742, ERR_743, or a close
 * during the TLS handshake); after the first cut it grows by an eighth of a turn per handshake
 * (an eighth of itself per round trip), so it settles just under the ingress's budget.
 * Like TCP's congestion window: the ingress's own per-source handshake budget is found, not
 * configured, and a window never does worse than the fixed 64 turns it replaces.
 */
export const INITIAL_WINDOW = 64;

/** What a granted client holds; both calls are idempotent. */
export interface DialTicket {
  /**
   * The transport is up and the preface sent (or the attempt failed): frees the handshake turn.
   * `ok` false: the ingress turned the handshake away for having too many (the window shrinks).
   */
  readonly handshakeDone: (ok?: boolean) => void;
  /** The ingress connection is over (or was never made): frees the turn and the port's and source's slots. */
  readonly release: () => void;
}

export interface FairGateLimits {
  maxConcurrentDials: number;
  maxIngressConnectionsPerPort: number;
  maxIngressConnectionsPerSource: number;
}

interface Waiter {
  source: string;
  grant: (t: DialTicket) => void;
}

interface PortState {
  held: number;
  queue: Waiter[];
}

export class DialGate {
  private handshakes = 0;
  /** Turns allowed now (the congestion window; see INITIAL_WINDOW). */
  private window: number;
  /** Growing by doubling until the ingress first pushed back. */
  private slowStart = true;
  /** Turns granted so far, and the count before which another push-back does not cut again. */
  private granted = 0;
  private noCutBefore = 0;
  /**
   * Every port that asked, in the order they first did: the round's order. Kept when idle (a
   * port dropped and added again would jump the round), bounded by the allocated ports.
   */
  private readonly ports = new Map<number, PortState>();
  private readonly sources = new Map<string, number>();
  /** The port granted last: the next round starts after it. */
  private lastPort: number | undefined;
  private queued = 0;

  constructor(private readonly limits: FairGateLimits) {
    this.window = Math.min(INITIAL_WINDOW, limits.maxConcurrentDials);
  }

  /** Handshake turns allowed now. */
  get turns(): number {
    return Math.floor(this.window);
  }

  /** Handshakes running now. */
  get active(): number {
    return this.handshakes;
  }

  /** Connections waiting for their turn, all ports. */
  get waiting(): number {
    return this.queued;
  }

  /** Ingress connections `port` holds now (granted and not released). */
  heldBy(port: number): number {
    return this.ports.get(port)?.held ?? 0;
  }

  /**
   * Resolves with a ticket once the client may dial, or undefined when `signal` aborts or
   * `timeoutMs` passes first (it is then out of the queue: a client gone while queued is never
   * dialled). Release the ticket exactly once the connection is over.
   */
  acquire(
    port: number,
    source: string,
    signal: CancelSignal,
    timeoutMs: number,
  ): Promise<DialTicket | undefined> {
    if (signal.aborted) return Promise.resolve(undefined);
    const state = this.portState(port);
    if (state.queue.length === 0 && this.admissible(state, source)) {
      this.lastPort = port;
      return Promise.resolve(this.take(port, state, source));
    }
    return new Promise((resolve) => {
      const waiter: Waiter = {
        source,
        grant: (t) => {
          clearTimeout(timer);
          signal.removeEventListener('abort', onGiveUp);
          resolve(t);
        },
      };
      const onGiveUp = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onGiveUp);
        const i = state.queue.indexOf(waiter);
        if (i >= 0) {
          state.queue.splice(i, 1);
          this.queued--;
        }
        resolve(undefined);
      };
      const timer = setTimeout(onGiveUp, Math.max(1, Math.round(timeoutMs)));
      signal.addEventListener('abort', onGiveUp, { once: true });
      state.queue.push(waiter);
      this.queued++;
    });
  }

  private portState(port: number): PortState {
    let s = this.ports.get(port);
    if (!s) this.ports.set(port, (s = { held: 0, queue: [] }));
    return s;
  }

  private admissible(state: PortState, source: string): boolean {
    const { limits } = this;
    return (
      this.handshakes < Math.floor(this.window) &&
      state.held < limits.maxIngressConnectionsPerPort &&
      (this.sources.get(source) ?? 0) < limits.maxIngressConnectionsPerSource
    );
  }

  private take(port: number, state: PortState, source: string): DialTicket {
    this.handshakes++;
    this.granted++;
    state.held++;
    this.sources.set(source, (this.sources.get(source) ?? 0) + 1);
    let inHandshake = true;
    let held = true;
    const handshakeDone = (ok = true) => {
      // A push-back can come after the preface went out (ERR_743 in the reply of a plain dial).
      if (!inHandshake) {
        if (!ok) this.adjust(false);
        return;
      }
      inHandshake = false;
      this.handshakes--;
      this.adjust(ok);
      this.pump();
    };
    return {
      handshakeDone,
      release: () => {
        if (!held) return;
        held = false;
        if (inHandshake) {
          inHandshake = false;
          this.handshakes--;
        }
        state.held--;
        const n = (this.sources.get(source) ?? 1) - 1;
        if (n > 0) this.sources.set(source, n);
        else this.sources.delete(source);
        this.pump();
      },
    };
  }

  /** Grows the window after a handshake while clients wait; halves it when the ingress pushed back. */
  private adjust(ok: boolean): void {
    const max = this.limits.maxConcurrentDials;
    if (!ok) {
      // One cut per window of handshakes: the refusals of one overshoot arrive together.
      if (this.granted < this.noCutBefore) return;
      this.slowStart = false;
      this.window = Math.max(Math.min(INITIAL_WINDOW, max), this.window * 0.75);
      this.noCutBefore = this.granted + Math.ceil(this.window);
      return;
    }
    if (this.queued === 0 || this.window >= max) return;
    this.window = Math.min(max, this.window + (this.slowStart ? 1 : 0.125));
  }

  /** Grants turns round-robin over the ports with waiters, while the handshake budget allows. */
  private pump(): void {
    while (this.queued > 0 && this.handshakes < Math.floor(this.window)) {
      const next = this.nextGrant();
      if (!next) return;
      const { port, state, index } = next;
      const [waiter] = state.queue.splice(index, 1);
      this.queued--;
      this.lastPort = port;
      waiter!.grant(this.take(port, state, waiter!.source));
    }
  }

  /** The first admissible waiter of the first port after `lastPort` (in the map's order) that has one. */
  private nextGrant(): { port: number; state: PortState; index: number } | undefined {
    const order = [...this.ports.entries()];
    const after = order.findIndex(([p]) => p === this.lastPort);
    for (let k = 1; k <= order.length; k++) {
      const [port, state] = order[(after + k) % order.length]!;
      if (state.queue.length === 0 || state.held >= this.limits.maxIngressConnectionsPerPort) continue;
      const index = state.queue.findIndex(
        (w) => (this.sources.get(w.source) ?? 0) < this.limits.maxIngressConnectionsPerSource,
      );
      if (index >= 0) return { port, state, index };
    }
    return undefined;
  }
}

/** A counter with a ceiling: the per-port silent dials. */
export class SlotCounter {
  private used = 0;

  constructor(private readonly max: number) {}

  get count(): number {
    return this.used;
  }

  tryAcquire(): boolean {
    if (this.used >= this.max) return false;
    this.used++;
    return true;
  }

  release(): void {
    if (this.used > 0) this.used--;
  }
}
