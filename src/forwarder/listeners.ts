/**
 * Keeps exactly one listening socket per desired port and hands accepted connections to
 * ForwardedConnection. Reconciled against the route map (desired-listeners.ts) whenever the
 * Services change: new ports are bound, removed ports stop accepting at once and their open
 * connections get a bounded drain, changed routes apply to new connections. A port that cannot
 * be bound, or whose socket fails, is retried with backoff and reported until it is bound.
 */
import { createServer, type Server, type Socket } from 'node:net';
import type { IngressTlsOptions } from '../api/ingress/dialer.js';
import type { Logger } from '../log/logger.js';
import { ForwardedConnection, type ConnectionLimits } from './connection.js';
import type { ListenerRoute } from './desired-listeners.js';
import type { ForwarderMetrics } from './metrics.js';

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
  authtoken: string;
  tls: IngressTlsOptions | undefined;
  limits: ConnectionLimits & { maxConnections: number; maxConnectionsPerPort: number };
  /** Open connections of a removed listener are closed after this long. */
  removedDrainMs: number;
  metrics: ForwarderMetrics;
  logger: Logger;
  /** Called whenever a listener's state changes (readiness may have changed). */
  onStateChange?: () => void;
}

/** Rebind delay after the n-th consecutive failure: 100 ms doubling to 30 s. */
export function rebindDelayMs(failures: number): number {
  return Math.min(30_000, 100 * 2 ** Math.max(0, failures - 1));
}

/** A listener bound this long counts as healthy again: the failure count restarts. */
const STABLE_AFTER_MS = 60_000;

class PortListener {
  state: ListenerState = 'binding';
  error: string | undefined;
  server: Server | undefined;
  failures = 0;
  boundAt = 0;
  retryTimer: NodeJS.Timeout | undefined;
  closed = false;
  readonly conns = new Set<ForwardedConnection>();
  /** Connections counted against the caps (turned-away ones are not). */
  accepted = 0;

  constructor(
    readonly port: number,
    public route: ListenerRoute,
  ) {}
}

export class ListenerSet {
  private readonly listeners = new Map<number, PortListener>();
  /** Listeners removed from the desired set whose connections are still draining. */
  private readonly retired = new Set<PortListener>();
  private total = 0;
  private accepting = true;

  constructor(private readonly opts: ListenerSetOptions) {}

  /** Makes the listeners match `routes`. Synchronous; binding completes in the background. */
  reconcile(routes: ReadonlyMap<number, ListenerRoute>): void {
    if (!this.accepting) return;
    for (const [port, l] of this.listeners) {
      if (!routes.has(port)) this.remove(l);
    }
    for (const [port, route] of routes) {
      const l = this.listeners.get(port);
      if (!l) {
        const nl = new PortListener(port, route);
        this.listeners.set(port, nl);
        this.opts.logger.info(
          { port, url: route.url, ingress: route.ingress ?? null },
          'forwarder listener added',
        );
        this.bind(nl);
      } else if (l.route.url !== route.url || l.route.ingress !== route.ingress) {
        this.opts.logger.info(
          { port, url: route.url, ingress: route.ingress ?? null, previous_url: l.route.url },
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

  /** Connections open now (dialling or piping), over every listener including retired ones. */
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

  /** Stops accepting on every port at once; open connections continue. Final. */
  stopAccepting(): void {
    this.accepting = false;
    for (const l of this.listeners.values()) this.closeServer(l);
    this.publishStates();
  }

  /** Waits up to `timeoutMs` for open connections to end, then closes the rest. */
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
      this.opts.logger.info({ connections: left.length }, 'forwarder drain timeout, closing connections');
    for (const c of left) c.destroy('shutdown');
    await Promise.all(left.map((c) => c.done));
  }

  private remove(l: PortListener): void {
    this.listeners.delete(l.port);
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
    l.state = l.failures > 0 ? l.state : 'binding';
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
    server.listen({ port: l.port, host: this.opts.host, backlog: 511 }, () => {
      server.off('error', onListenError);
      if (l.closed || l.server !== server) {
        server.close();
        return;
      }
      // Accept failures (EMFILE, ENFILE, …) would repeat for every queued connection; closing
      // the socket and rebinding after a backoff keeps the process from spinning on them.
      server.on('error', (err: NodeJS.ErrnoException) => {
        this.opts.metrics.acceptErrors.inc({ port: String(l.port) });
        server.close();
        if (l.server === server) l.server = undefined;
        this.failed(l, `listening socket failed: ${err.code ?? err.message}`);
      });
      if (Date.now() - l.boundAt > STABLE_AFTER_MS) l.failures = 0;
      l.state = 'bound';
      l.error = undefined;
      l.boundAt = Date.now();
      this.opts.logger.info({ port: l.port, url: l.route.url }, 'forwarder listener bound');
      this.publishStates();
    });
  }

  private failed(l: PortListener, error: string): void {
    if (l.closed) return;
    if (l.boundAt > 0 && Date.now() - l.boundAt > STABLE_AFTER_MS) l.failures = 0;
    l.failures++;
    l.state = 'failed';
    l.error = error;
    const delay = rebindDelayMs(l.failures);
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
    const conn = new ForwardedConnection(socket, {
      port: l.port,
      url: l.route.url,
      ingress: l.route.ingress,
      authtoken: opts.authtoken,
      tls: opts.tls,
      limits: opts.limits,
      metrics: opts.metrics,
      logger: opts.logger,
    });
    l.conns.add(conn);
    const overTotal = this.total >= opts.limits.maxConnections;
    if (overTotal || l.accepted >= opts.limits.maxConnectionsPerPort) {
      conn.reject(
        'limit',
        overTotal
          ? `limits.maxConnections (${opts.limits.maxConnections}) reached`
          : `limits.maxConnectionsPerPort (${opts.limits.maxConnectionsPerPort}) reached`,
      );
      void conn.done.then(() => l.conns.delete(conn));
      return;
    }
    l.accepted++;
    this.total++;
    void conn.done.then(() => {
      l.conns.delete(conn);
      l.accepted--;
      this.total--;
    });
    conn.start();
  }

  private publishStates(): void {
    const counts: Record<ListenerState, number> = { binding: 0, bound: 0, failed: 0 };
    for (const l of this.listeners.values()) counts[l.state]++;
    for (const [state, n] of Object.entries(counts)) this.opts.metrics.listeners.set({ state }, n);
    this.opts.onStateChange?.();
  }
}
