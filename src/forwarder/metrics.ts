import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { DOWN_AFTER, DOWN_PORT_DIALS } from './upstream-verdict.js';

/**
 * Counts kept as plain numbers on a connection's path and handed to prom-client only when the
 * metrics are read: its label hashing cost tens of microseconds per connection (BENCHMARKS.md).
 * `key` must identify the labels; `labels` is called once per key between two reads.
 */
export class PendingCounts<L extends string> {
  private readonly pending = new Map<string, { labels: Record<L, string>; n: number }>();

  add(key: string, labels: () => Record<L, string>, n = 1): void {
    const e = this.pending.get(key);
    if (e) e.n += n;
    else this.pending.set(key, { labels: labels(), n });
  }

  /** Moves every pending count into `counter`. */
  flushInto(counter: Counter<L>): void {
    for (const { labels, n } of this.pending.values()) counter.inc(labels, n);
    this.pending.clear();
  }

  /** Forgets pending counts whose labels match (a series about to be removed). */
  drop(match: (labels: Record<L, string>) => boolean): void {
    for (const [k, e] of this.pending) if (match(e.labels)) this.pending.delete(k);
  }
}

/** The per-connection counts of the metrics below, before they are read. */
export interface ConnectionTally {
  /** Open connections by port. */
  active: Map<string, number>;
  connections: PendingCounts<'port' | 'outcome'>;
  bytes: PendingCounts<'port' | 'direction'>;
  urlDials: PendingCounts<'port' | 'url' | 'result'>;
  /** Connections waiting for a turn to dial now: read when the metrics are read (set by the listeners). */
  dialsWaiting: () => number;
  /** Handshake turns allowed now (the dial window). */
  dialWindow: () => number;
  /** Ports whose dials said the upstream is down (their dials awaiting an answer are capped). */
  portsUpstreamDown: () => number;
  /** HTTP/2 sessions to the ingress open now (v2). */
  ingressSessions: () => number;
  upstreams: PendingCounts<'protocol'>;
}

/** The `endpoint_binder_forwarder_*` metrics, created once per Registry. */
export interface ForwarderMetrics {
  tally: ConnectionTally;
  active: Gauge<'port'>;
  connections: Counter<'port' | 'outcome'>;
  bytes: Counter<'port' | 'direction'>;
  dialSeconds: Histogram<'result'>;
  refusals: Counter<'code'>;
  listeners: Gauge<'state'>;
  acceptErrors: Counter<'port'>;
  turnedAway: Counter<'reason'>;
  dialsWaiting: Gauge;
  dialWindow: Gauge;
  portsUpstreamDown: Gauge;
  ingressRecordRefused: Gauge;
  authtokenReloads: Counter<'result'>;
  ready: Gauge;
  urlDials: Counter<'port' | 'url' | 'result'>;
  ingressSessions: Gauge;
  upstreams: Counter<'protocol'>;
}

const perRegistry = new WeakMap<Registry, ForwarderMetrics>();

export function forwarderMetrics(registry: Registry): ForwarderMetrics {
  const existing = perRegistry.get(registry);
  if (existing) return existing;
  const registers = [registry];
  const tally: ConnectionTally = {
    active: new Map(),
    connections: new PendingCounts(),
    bytes: new PendingCounts(),
    urlDials: new PendingCounts(),
    dialsWaiting: () => 0,
    dialWindow: () => 0,
    portsUpstreamDown: () => 0,
    ingressSessions: () => 0,
    upstreams: new PendingCounts(),
  };
  const m: ForwarderMetrics = {
    tally,
    active: new Gauge({
      name: 'endpoint_binder_forwarder_connections_active',
      help: 'Client connections open now, by allocated port (dialling or piping).',
      labelNames: ['port'],
      registers,
      collect() {
        for (const [port, n] of tally.active) this.set({ port }, n);
      },
    }),
    connections: new Counter({
      name: 'endpoint_binder_forwarder_connections_total',
      help: 'Client connections that ended, by allocated port and outcome (closed, idle_timeout, client_error, ingress_error, refused, dial_failed, no_ingress, limit, shutdown, removed).',
      labelNames: ['port', 'outcome'],
      registers,
      collect() {
        tally.connections.flushInto(this);
      },
    }),
    bytes: new Counter({
      name: 'endpoint_binder_forwarder_bytes_total',
      help: 'Bytes piped, by allocated port and direction (to_ingress: from the client; to_client: from the ingress); counted when a connection ends.',
      labelNames: ['port', 'direction'],
      registers,
      collect() {
        tally.bytes.flushInto(this);
      },
    }),
    dialSeconds: new Histogram({
      name: 'endpoint_binder_forwarder_ingress_dial_seconds',
      help: 'One attempt to open a stream through the binding ingress (connect, TLS, preface, reply), by result (ok or the ERR_ code).',
      labelNames: ['result'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
    refusals: new Counter({
      name: 'endpoint_binder_forwarder_ingress_refusals_total',
      help: 'Failed ingress attempts by code: ERR_7xx answered by the ingress, ERR_79x observed by the forwarder (each attempt, retries included).',
      labelNames: ['code'],
      registers,
    }),
    listeners: new Gauge({
      name: 'endpoint_binder_forwarder_listeners',
      help: 'Desired listeners by state (bound, failed, binding).',
      labelNames: ['state'],
      registers,
    }),
    acceptErrors: new Counter({
      name: 'endpoint_binder_forwarder_accept_errors_total',
      help: 'Errors of a listening socket (accept failures such as EMFILE); the listener backs off and rebinds.',
      labelNames: ['port'],
      registers,
    }),
    turnedAway: new Counter({
      name: 'endpoint_binder_forwarder_turned_away_total',
      help: 'Clients reset without being served, by reason (max_connections, max_connections_per_port, out_of_descriptors, no_ingress).',
      labelNames: ['reason'],
      registers,
    }),
    ...gateGauges(tally, registers),
    ingressRecordRefused: new Gauge({
      name: 'endpoint_binder_forwarder_ingress_record_refused',
      help: '1 while the install record names a binding ingress other than the pinned one (ingress.address, or the host this forwarder started with); the record is not followed.',
      registers,
    }),
    authtokenReloads: new Counter({
      name: 'endpoint_binder_forwarder_authtoken_reloads_total',
      help: 'Reads of a changed authtokenFile, by result (ok, invalid).',
      labelNames: ['result'],
      registers,
    }),
    ready: new Gauge({
      name: 'endpoint_binder_forwarder_ready',
      help: '1 when /readyz answers 200.',
      registers,
    }),
    urlDials: new Counter({
      name: 'endpoint_binder_forwarder_url_dials_total',
      help: 'Client connections per endpoint URL by data-path result: ok (streaming through the ingress) or the final ERR_ code (no_ingress when no address was known). Series are removed with their listener, so they stay bounded by the URLs served.',
      labelNames: ['port', 'url', 'result'],
      registers,
      collect() {
        tally.urlDials.flushInto(this);
      },
    }),
    ingressSessions: new Gauge({
      name: 'endpoint_binder_forwarder_ingress_sessions',
      help: 'HTTP/2 sessions to the binding ingress open now (protocol v2; each carries many forwarded connections).',
      registers,
      collect() {
        this.set(tally.ingressSessions());
      },
    }),
    upstreams: new Counter({
      name: 'endpoint_binder_forwarder_ingress_upstreams_total',
      help: 'Upstreams opened through the binding ingress, by protocol: v1 (one connection each) or v2 (one HTTP/2 stream each).',
      labelNames: ['protocol'],
      registers,
      collect() {
        tally.upstreams.flushInto(this);
      },
    }),
  };
  perRegistry.set(registry, m);
  return m;
}

/** The dial gate's gauges, read from the gate when the metrics are read. */
function gateGauges(
  tally: ConnectionTally,
  registers: Registry[],
): Pick<ForwarderMetrics, 'dialsWaiting' | 'dialWindow' | 'portsUpstreamDown'> {
  return {
    dialsWaiting: new Gauge({
      name: 'endpoint_binder_forwarder_dials_waiting',
      help: "Client connections waiting for a turn to dial the ingress (the dial window, or their port's or source's share).",
      registers,
      collect() {
        this.set(tally.dialsWaiting());
      },
    }),
    dialWindow: new Gauge({
      name: 'endpoint_binder_forwarder_dial_window',
      help: 'Ingress handshakes allowed at once now: starts at 64, follows the round trip up to limits.maxConcurrentDials, cut when the ingress has too many from this pod (a half the first time, an eighth later).',
      registers,
      collect() {
        this.set(tally.dialWindow());
      },
    }),
    portsUpstreamDown: new Gauge({
      name: 'endpoint_binder_forwarder_ports_upstream_down',
      help: `Ports whose last ${DOWN_AFTER} answered ingress dials in a row said the endpoint's upstream is down (ERR_730, ERR_731): each has at most ${DOWN_PORT_DIALS} dials awaiting the ingress's answer until one reaches its upstream.`,
      registers,
      collect() {
        this.set(tally.portsUpstreamDown());
      },
    }),
  };
}
