/**
 * Keeps exactly one listening socket per desired port and hands accepted connections to
 * ForwardedConnection. Reconciled against the route map (desired-listeners.ts) whenever the
 * Services change: new ports are bound, removed ports stop accepting at once and their open
 * connections get a bounded drain, changed routes apply to new connections. A port that cannot
 * be bound, or whose socket fails, is retried with backoff and reported until it is bound.
 */
import { createServer, type Server, type Socket } from 'node:net';
import type { Logger } from '../log/logger.js';
import { Backoff, baseDelay } from '../time/backoff.js';
import { REBIND_CURVE } from '../time/curves.js';
import type { DialTrigger } from './config.js';
import {
  ForwardedConnection,
  type ConnectionContext,
  type ConnectionLimits,
  type IngressRoute,
} from './connection.js';
import type { ListenerRoute } from './desired-listeners.js';
import { DialGate, SlotCounter } from './dial-gate.js';
import { connectionsForDescriptors } from './fd-limit.js';
import type { ForwarderMetrics } from './metrics.js';
import type { DialResult } from './url-health.js';
import type { TurnedAway } from './turned-away.js';

export type ListenerState = 'binding' | 'bound' | 'failed';

export interface ListenerStatus {
  port: number;
  url: string;
  state: ListenerState;
  /** The last bind or socket error, while not bound. */
  error?: string;
}

export interface ListenerSetOptions {
  host: string;
  /** The ingress to dial for a new connection, or undefined while none is known. */
  ingress: () => IngressRoute | undefined;
  /** Per URL scheme (`http`, `tcp`): dial at the first byte or at accept. */
  dialOn: Record<string, DialTrigger>;
  limits: ConnectionLimits & {
    maxConnections: number;
    maxConnectionsPerPort: number;
    maxSilentDialsPerPort: number;
    maxConcurrentDials: number;
    maxIngressConnectionsPerPort: number;
    maxIngressConnectionsPerSource: number;
    acceptBacklog: number;
  };
  /** Open connections of a removed listener are closed after this long. */
  removedDrainMs: number;
  metrics: ForwarderMetrics;
  logger: Logger;
  turnedAway: TurnedAway;
  /** The process's open files limit, when known: the connection cap is lowered to fit it. */
  descriptorLimit?: number;
  /** Called whenever a listener's state changes (readiness may have changed). */
  onStateChange?: () => void;
  random?: () => number;
  /** Told the data-path result of each connection that reached a dial, with its port and URL. */
  observe?: (port: number, url: string, result: DialResult) => void;
}

/**
 * How often the idle sweep looks at every open connection: a tenth of the idle timeout, between
 * 10 ms and 1 s. An idle connection is reset between `idleTimeoutMs` and that much later.
 */
export function idleSweepMs(idleTimeoutMs: number): number {
  return Math.min(1000, Math.max(10, Math.floor(idleTimeoutMs / 10)));
}

/** The un-jittered rebind delay after the n-th consecutive failure (n from 1). */
export function rebindDelayMs(failures: number): number {
  return baseDelay(Math.max(0, failures - 1), REBIND_CURVE);
}

class PortListener {
  state: ListenerState = 'binding';
  error: string | undefined;
  server: Server | undefined;
  readonly backoff = new Backoff(REBIND_CURVE);
  retryTimer: NodeJS.Timeout | undefined;
  closed = false;
  readonly conns = new Set<ForwardedConnection>();
  /** Connections counted against the caps (turned-away ones are not). */
  accepted = 0;
  readonly silent: SlotCounter;
  /**
   * What its connections share (one object per port and URL, not one per connection: an idle
   * connection holds it for hours).
   */
  context: ConnectionContext | undefined;

  constructor(
    readonly port: number,
    public route: ListenerRoute,
    maxSilent: number,
  ) {
    this.silent = new SlotCounter(maxSilent);
  }
}

function schemeOf(url: string): string {
  const i = url.indexOf('://');
  return i > 0 ? url.slice(0, i) : '';
}

export class ListenerSet {
  private readonly listeners = new Map<number, PortListener>();
  /** Listeners removed from the desired set whose connections are still draining. */
  private readonly retired = new Set<PortListener>();
  private readonly gate: DialGate;
  private total = 0;
  private accepting = true;
  /** Every connection the listeners received (turned-away ones too) and when the last one came. */
  private arrivalCount = 0;
  private lastArrival = 0;
  /** The idle sweep; runs while any connection is open. */
  private sweepTimer: NodeJS.Timeout | undefined;

  constructor(private readonly opts: ListenerSetOptions) {
    this.gate = new DialGate(opts.limits);
    opts.metrics.tally.dialsWaiting = () => this.gate.waiting;
    opts.metrics.tally.dialWindow = () => this.gate.turns;
    opts.metrics.tally.portsUpstreamDown = () => this.gate.portsUpstreamDown;
  }

  /** Makes the listeners match `routes`. Synchronous; binding completes in the background. */
  reconcile(routes: ReadonlyMap<number, ListenerRoute>): void {
    if (!this.accepting) return;
    for (const [port, l] of this.listeners) {
      if (!routes.has(port)) this.remove(l);
    }
    for (const [port, route] of routes) {
      const l = this.listeners.get(port);
      if (!l) {
        const nl = new PortListener(port, route, this.opts.limits.maxSilentDialsPerPort);
        this.listeners.set(port, nl);
        this.opts.logger.info({ port, url: route.url }, 'forwarder listener added');
        this.bind(nl);
      } else if (l.route.url !== route.url) {
        this.opts.logger.info(
          { port, url: route.url, previous_url: l.route.url },
          'forwarder listener route changed',
        );
        l.route = route;
      }
    }
    this.publishStates();
  }

  status(): ListenerStatus[] {
    return [...this.listeners.values()]
      .sort((a, b) => a.port - b.port)
      .map((l) => ({
        port: l.port,
        url: l.route.url,
        state: l.state,
        ...(l.error ? { error: l.error } : {}),
      }));
  }

  /** True when every desired listener is bound. */
  allBound(): boolean {
    for (const l of this.listeners.values()) if (l.state !== 'bound') return false;
    return true;
  }

  /** The ports currently bound. */
  boundPorts(): number[] {
    return [...this.listeners.values()]
      .filter((l) => l.state === 'bound')
      .map((l) => l.port)
      .sort((a, b) => a - b);
  }

  /** Connections open now (waiting, dialling or piping), over every listener including retired ones. */
  openConnections(): number {
    let n = 0;
    for (const l of [...this.listeners.values(), ...this.retired]) n += l.conns.size;
    return n;
  }

  /** Bytes buffered in user space over every open connection (bounded by the streams' high-water marks). */
  bufferedBytes(): number {
    let n = 0;
    for (const l of [...this.listeners.values(), ...this.retired]) for (const c of l.conns) n += c.buffered();
    return n;
  }

  /** Connections received so far, counted before any limit turns one away. */
  arrivals(): number {
    return this.arrivalCount;
  }

  /** When the last connection arrived (ms since the epoch; 0 before the first). */
  lastArrivalAt(): number {
    return this.lastArrival;
  }

  /** Stops accepting on every port at once; open connections continue. Final. */
  stopAccepting(): void {
    this.accepting = false;
    for (const l of this.listeners.values()) this.closeServer(l);
    this.publishStates();
  }

  /** Waits up to `timeoutMs` for open connections to end, then resets the rest. */
  async drain(timeoutMs: number, signal?: AbortSignal): Promise<void> {
    const all = (): ForwardedConnection[] =>
      [...this.listeners.values(), ...this.retired].flatMap((l) => [...l.conns]);
    let timer: NodeJS.Timeout | undefined;
    let onAbort = (): void => undefined;
    const deadline = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timeoutMs);
      onAbort = resolve;
      signal?.addEventListener('abort', onAbort, { once: true });
    });
    await Promise.race([Promise.all(all().map((c) => c.done)), deadline]);
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
    const left = all();
    if (left.length > 0)
      this.opts.logger.info({ connections: left.length }, 'forwarder drain timeout, resetting connections');
    for (const c of left) c.destroy('shutdown');
    await Promise.all(left.map((c) => c.done));
  }

  private remove(l: PortListener): void {
    this.listeners.delete(l.port);
    this.gate.portRemoved(l.port);
    this.closeServer(l);
    this.opts.logger.info(
      { port: l.port, url: l.route.url, connections: l.conns.size },
      'forwarder listener removed',
    );
    if (l.conns.size === 0) return;
    this.retired.add(l);
    const timer = setTimeout(() => {
      for (const c of l.conns) c.destroy('removed');
    }, this.opts.removedDrainMs);
    timer.unref();
    void Promise.all([...l.conns].map((c) => c.done)).then(() => {
      clearTimeout(timer);
      this.retired.delete(l);
    });
  }

  private closeServer(l: PortListener): void {
    l.closed = true;
    clearTimeout(l.retryTimer);
    l.server?.close();
    l.server = undefined;
  }

  private bind(l: PortListener): void {
    if (l.closed) return;
    if (l.backoff.attempt === 0) l.state = 'binding';
    const server = createServer({ allowHalfOpen: true, pauseOnConnect: true }, (socket) =>
      this.accept(l, socket),
    );
    l.server = server;
    const onListenError = (err: NodeJS.ErrnoException) => {
      server.close();
      if (l.server === server) l.server = undefined;
      this.failed(l, `cannot listen on ${this.opts.host}:${l.port}: ${err.code ?? err.message}`);
    };
    server.once('error', onListenError);
    // A deep accept queue absorbs bursts (2,000 clients at once) while the loop is busy with
    // handshakes; the kernel caps it at net.core.somaxconn.
    server.listen({ port: l.port, host: this.opts.host, backlog: this.opts.limits.acceptBacklog }, () => {
      server.off('error', onListenError);
      if (l.closed || l.server !== server) {
        server.close();
        return;
      }
      // libuv answers EMFILE on accept itself (it closes the pending connections with a reserved
      // descriptor) and reports only what it cannot handle; that would repeat for every queued
      // connection, so the socket is closed and rebound after a backoff.
      server.on('error', (err: NodeJS.ErrnoException) => {
        this.opts.metrics.acceptErrors.inc({ port: String(l.port) });
        if (err.code === 'EMFILE' || err.code === 'ENFILE')
          this.opts.turnedAway.record('out_of_descriptors', l.port, `accept failed: ${err.code}`);
        server.close();
        if (l.server === server) l.server = undefined;
        this.failed(l, `listening socket failed: ${err.code ?? err.message}`);
      });
      l.state = 'bound';
      l.error = undefined;
      this.opts.logger.info({ port: l.port, url: l.route.url }, 'forwarder listener bound');
      this.publishStates();
    });
  }

  private failed(l: PortListener, error: string): void {
    if (l.closed) return;
    l.state = 'failed';
    l.error = error;
    const delay = l.backoff.next(Date.now(), (this.opts.random ?? Math.random)());
    this.opts.logger.warn(
      { port: l.port, url: l.route.url, error, retry_in_ms: delay },
      'forwarder listener failed',
    );
    this.publishStates();
    l.retryTimer = setTimeout(() => this.bind(l), delay);
    l.retryTimer.unref();
  }

  private accept(l: PortListener, socket: Socket): void {
    const { opts } = this;
    this.arrivalCount++;
    this.lastArrival = Date.now();
    const conn = new ForwardedConnection(socket, this.contextFor(l));
    l.conns.add(conn);
    const fdCap =
      opts.descriptorLimit !== undefined
        ? connectionsForDescriptors(opts.descriptorLimit, this.listeners.size + this.retired.size)
        : Infinity;
    const refusal =
      this.total >= fdCap && fdCap < opts.limits.maxConnections
        ? ({
            reason: 'out_of_descriptors',
            message: `the open files limit (${opts.descriptorLimit}) holds ${fdCap} connections; raise it (ulimit -n) or lower limits.maxConnections`,
          } as const)
        : this.total >= opts.limits.maxConnections
          ? ({
              reason: 'max_connections',
              message: `limits.maxConnections (${opts.limits.maxConnections}) reached`,
            } as const)
          : l.accepted >= opts.limits.maxConnectionsPerPort
            ? ({
                reason: 'max_connections_per_port',
                message: `limits.maxConnectionsPerPort (${opts.limits.maxConnectionsPerPort}) reached`,
              } as const)
            : undefined;
    if (refusal) {
      opts.turnedAway.record(refusal.reason, l.port, refusal.message);
      conn.reject('limit', refusal.message);
      void conn.done.then(() => l.conns.delete(conn));
      return;
    }
    l.accepted++;
    this.total++;
    this.sweepTimer ??= setInterval(() => this.sweepIdle(), idleSweepMs(opts.limits.idleTimeoutMs)).unref();
    void conn.done.then(() => {
      l.conns.delete(conn);
      l.accepted--;
      this.total--;
    });
    conn.start();
  }

  /** The context of `l`'s connections, made again when its URL changed. */
  private contextFor(l: PortListener): ConnectionContext {
    if (l.context?.url === l.route.url) return l.context;
    const { opts } = this;
    l.context = {
      port: l.port,
      url: l.route.url,
      ingress: opts.ingress,
      dialOn: opts.dialOn[schemeOf(l.route.url)] ?? 'accept',
      silent: l.silent,
      gate: this.gate,
      limits: opts.limits,
      metrics: opts.metrics,
      logger: opts.logger,
      turnedAway: opts.turnedAway,
      ...(opts.random ? { random: opts.random } : {}),
      ...(opts.observe ? { observe: (r: DialResult) => opts.observe!(l.port, l.route.url, r) } : {}),
    };
    return l.context;
  }

  private sweepIdle(): void {
    const now = performance.now();
    let open = 0;
    for (const group of [this.listeners.values(), this.retired])
      for (const l of group)
        for (const c of l.conns) {
          open++;
          c.checkIdle(now);
        }
    if (open === 0) {
      clearInterval(this.sweepTimer);
      this.sweepTimer = undefined;
    }
  }

  /** Connections waiting for a turn to dial. */
  dialsWaiting(): number {
    return this.gate.waiting;
  }

  private publishStates(): void {
    const counts: Record<ListenerState, number> = { binding: 0, bound: 0, failed: 0 };
    for (const l of this.listeners.values()) counts[l.state]++;
    for (const [state, n] of Object.entries(counts)) this.opts.metrics.listeners.set({ state }, n);
    this.opts.onStateChange?.();
  }
}
