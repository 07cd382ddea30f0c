import type { CancelSignal } from '../api/ingress/cancel.js';
import { DialWindow, paceAfterGrant } from './dial-window.js';
import { afterAnswer, DOWN_PORT_DIALS, unknownVerdict, type UpstreamVerdict } from './upstream-verdict.js';

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
 * asks again and joins the back of its own port's queue; one the ingress refused for having too
 * many handshakes from us (a push-back) asks again at the front of its own port's queue: its dial
 * was turned away for our burst, not for its own endpoint, so it keeps its turn (in the round over
 * the ports, like any other).
 *
 * Turns are paced: spread over the recent handshake time, not granted together whenever they
 * free up together (dial-window.ts `spacingMs`; the gate's one timer waits for the pace).
 *
 * A port whose upstream is down (DOWN_AFTER answers in a row said ERR_730/731: upstream-verdict.ts)
 * has at most DOWN_PORT_DIALS dials waiting for the ingress's answer at once, until one of them
 * reaches the upstream again: a circuit breaker that keeps probing. Its clients are still dialled
 * (the upstream may be back), but a dial to a black-holed upstream is a TLS handshake on both
 * sides (v1) and 5 s of the ingress's upstream connect, then the same again for its retry: 400
 * clients of such an endpoint that gave up and reconnected together kept a window's worth of
 * handshakes running on the same cores as the next endpoint's, whose connect p99 was 4–9× its
 * idle p99 over TLS v1 (BENCHMARKS "#27 round 6"). Capping only its handshakes in flight did not
 * bound that: each is a few ms, so four at a time still ran hundreds a second. The turns a down
 * port leaves go to the other ports.
 */

/** The handshake window (how many turns at once) is learnt: dial-window.ts. */
export { INITIAL_WINDOW } from './dial-window.js';

/**
 * How a handshake ended: `up` (transport up, preface sent), `failed` (before that: it neither
 * grows the window nor counts in the handshake time), `pushed-back` (the ingress had too many
 * handshakes from us: the window shrinks; may come after `up`, in the reply of a plain dial).
 */
export type HandshakeOutcome = 'up' | 'failed' | 'pushed-back';

/** What a granted client holds; both calls are idempotent. */
export interface DialTicket {
  /** The handshake is over (default `up`): frees the handshake turn. */
  readonly handshakeDone: (outcome?: HandshakeOutcome) => void;
  /** The ingress connection is over (or was never made): frees the turn and the port's and source's slots. */
  readonly release: () => void;
  /**
   * The ingress answered this dial: it reached the upstream (`true`) or said the upstream is down
   * (`false`: ERR_730/731). upstream-verdict.ts decides from these whether the port is down.
   */
  readonly upstreamAnswered: (reached: boolean) => void;
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
  /** Dials of this port granted and not yet answered by the ingress (nor failed, nor released). */
  unanswered: number;
  /** What its dials said of the upstream; while `down`, DOWN_PORT_DIALS apply. */
  upstream: UpstreamVerdict;
}

export class DialGate {
  private handshakes = 0;
  /** Turns allowed now (the congestion window, learnt from the ingress's push-backs). */
  private readonly window: DialWindow;
  /** Recent handshake duration, ms (a moving average over about eight handshakes). */
  private handshakeMs = 0;
  /**
   * Every port that asked, in the order they first did: the round's order. Kept when idle (a
   * port dropped and added again would jump the round), bounded by the allocated ports.
   */
  private readonly ports = new Map<number, PortState>();
  private readonly sources = new Map<string, number>();
  /** The port granted last: the next round starts after it. */
  private lastPort: number | undefined;
  private queued = 0;
  /** The earliest time the next turn may be granted (grants are paced: dial-window.ts). */
  private paceAt = Number.NEGATIVE_INFINITY;
  /** Runs `pump` when the pace lets the next waiter through; set only while one waits for it. */
  private paceTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly limits: FairGateLimits,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.window = new DialWindow(limits.maxConcurrentDials);
  }

  /** Handshake turns allowed now. */
  get turns(): number {
    return this.window.turns;
  }

  /** Handshakes running now. */
  get active(): number {
    return this.handshakes;
  }

  /** Connections waiting for their turn, all ports. */
  get waiting(): number {
    return this.queued;
  }

  /**
   * How long a dial granted now is expected to take until the ingress answers, ms: one and a half
   * times the recent handshakes (grant to transport up; the answer takes about one more half of
   * it: a round trip of the last two). 0 until a handshake completed.
   */
  get expectedDialMs(): number {
    return 1.5 * this.handshakeMs;
  }

  /** Ingress connections `port` holds now (granted and not released). */
  heldBy(port: number): number {
    return this.ports.get(port)?.held ?? 0;
  }

  /** Ports whose dials said their upstream is down (upstream-verdict.ts). */
  get portsUpstreamDown(): number {
    let n = 0;
    for (const state of this.ports.values()) if (state.upstream.down) n++;
    return n;
  }

  /**
   * `port` no longer serves its endpoint (its listener was removed; the port may later serve
   * another): what its dials said of the upstream is forgotten, and so are the answers of its dials
   * still on their way.
   */
  portRemoved(port: number): void {
    const state = this.ports.get(port);
    if (!state) return;
    state.upstream = unknownVerdict(this.window.issued);
  }

  /** Whether `port`'s dials said its upstream is down (DOWN_PORT_DIALS apply). */
  upstreamDown(port: number): boolean {
    return this.ports.get(port)?.upstream.down ?? false;
  }

  /**
   * Resolves with a ticket once the client may dial, or undefined when `signal` aborts or
   * `timeoutMs` passes first (it is then out of the queue: a client gone while queued is never
   * dialled). Release the ticket exactly once the connection is over. `first`: a retry after a
   * push-back, queued at the front of its port's queue.
   *
   * A queued client gives up `expectedDialMs` before its `timeoutMs`: a turn granted later would
   * start a dial that most likely runs out of time before the ingress answers, a handshake's CPU
   * (both sides) and a turn taken from the clients behind it, for a client reset anyway. In a
   * burst larger than the ingress lets through in time, this is where the waste was: 119–534
   * dials per 2,000 that got their turn and then timed out.
   */
  acquire(
    port: number,
    source: string,
    signal: CancelSignal,
    timeoutMs: number,
    first = false,
  ): Promise<DialTicket | undefined> {
    if (signal.aborted) return Promise.resolve(undefined);
    const state = this.portState(port);
    if (state.queue.length === 0 && this.admissible(state, source)) {
      this.lastPort = port;
      return Promise.resolve(this.take(port, state, source));
    }
    const waitMs = timeoutMs - this.expectedDialMs;
    if (waitMs <= 0) return Promise.resolve(undefined);
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
      const timer = setTimeout(onGiveUp, Math.max(1, Math.round(waitMs)));
      signal.addEventListener('abort', onGiveUp, { once: true });
      if (first) state.queue.unshift(waiter);
      else state.queue.push(waiter);
      this.queued++;
      // Held back by the pace alone: the pump arms its timer (or grants, if the pace passed).
      this.pump();
    });
  }

  private portState(port: number): PortState {
    let s = this.ports.get(port);
    if (!s) this.ports.set(port, (s = { held: 0, queue: [], unanswered: 0, upstream: unknownVerdict() }));
    return s;
  }

  private admissible(state: PortState, source: string): boolean {
    return (
      this.handshakes < this.window.turns &&
      this.now() >= this.paceAt &&
      this.portMayDial(state) &&
      (this.sources.get(source) ?? 0) < this.limits.maxIngressConnectionsPerSource
    );
  }

  /** The port's own budgets: its share of ingress connections, and DOWN_PORT_DIALS while its upstream is down. */
  private portMayDial(state: PortState): boolean {
    return (
      state.held < this.limits.maxIngressConnectionsPerPort &&
      !(state.upstream.down && state.unanswered >= DOWN_PORT_DIALS)
    );
  }

  private take(port: number, state: PortState, source: string): DialTicket {
    const seq = this.window.grant();
    const inFlightAtGrant = this.handshakes;
    const grantedAt = this.now();
    this.paceAt = paceAfterGrant(
      this.paceAt,
      grantedAt,
      this.window.spacingMs(this.handshakeMs),
      this.window.pacingBurst,
    );
    this.handshakes++;
    state.unanswered++;
    state.held++;
    this.sources.set(source, (this.sources.get(source) ?? 0) + 1);
    let inHandshake = true;
    let awaitingAnswer = true;
    let held = true;
    // The dial is over for its port's DOWN_PORT_DIALS: answered, failed, or released.
    const answered = () => {
      if (!awaitingAnswer) return;
      awaitingAnswer = false;
      state.unanswered--;
    };
    const handshakeDone = (outcome: HandshakeOutcome = 'up') => {
      // A push-back can come after the preface went out (ERR_743 in the reply of a plain dial).
      if (outcome === 'pushed-back') this.window.pushedBack(seq, inFlightAtGrant);
      if (outcome !== 'up') answered();
      if (inHandshake) {
        inHandshake = false;
        this.handshakes--;
        if (outcome === 'up') {
          this.window.completed(this.queued > 0);
          const ms = this.now() - grantedAt;
          this.handshakeMs = this.handshakeMs === 0 ? ms : this.handshakeMs + (ms - this.handshakeMs) / 8;
        }
      }
      this.pump();
    };
    return {
      handshakeDone,
      release: () => {
        if (!held) return;
        held = false;
        answered();
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
      upstreamAnswered: (reached) => {
        answered();
        state.upstream = afterAnswer(state.upstream, seq, reached);
        this.pump();
      },
    };
  }

  /** Grants turns round-robin over the ports with waiters, while the handshake budget and the pace allow. */
  private pump(): void {
    while (this.queued > 0 && this.handshakes < this.window.turns && this.paced()) {
      const next = this.nextGrant();
      if (!next) return;
      const { port, state, index } = next;
      const [waiter] = state.queue.splice(index, 1);
      this.queued--;
      this.lastPort = port;
      waiter!.grant(this.take(port, state, waiter!.source));
    }
  }

  /** True when the pace lets a grant out now; otherwise arms the one timer that pumps when it does. */
  private paced(): boolean {
    const waitMs = this.paceAt - this.now();
    if (waitMs <= 0) return true;
    if (!this.paceTimer) {
      this.paceTimer = setTimeout(() => {
        this.paceTimer = undefined;
        this.pump();
      }, Math.ceil(waitMs));
      this.paceTimer.unref();
    }
    return false;
  }

  /** The first admissible waiter of the first port after `lastPort` (in the map's order) that has one. */
  private nextGrant(): { port: number; state: PortState; index: number } | undefined {
    const order = [...this.ports.entries()];
    const after = order.findIndex(([p]) => p === this.lastPort);
    for (let k = 1; k <= order.length; k++) {
      const [port, state] = order[(after + k) % order.length]!;
      if (state.queue.length === 0 || !this.portMayDial(state)) continue;
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
