/**
 * Clients the forwarder turns away without serving, by class: counted in a metric at once and
 * logged at most once per interval per class with the count since the last line, so a flood of
 * ten thousand refusals is visible without ten thousand log lines.
 */
import type { Logger } from '../log/logger.js';
import type { ForwarderMetrics } from './metrics.js';

export type TurnedAwayReason =
  /** `limits.maxConnections` reached. */
  | 'max_connections'
  /** `limits.maxConnectionsPerPort` reached. */
  | 'max_connections_per_port'
  /** The process ran out of file descriptors (a dial or an accept failed with EMFILE/ENFILE). */
  | 'out_of_descriptors'
  /** No binding ingress address is known. */
  | 'no_ingress';

export class TurnedAway {
  private readonly pending = new Map<
    TurnedAwayReason,
    { count: number; ports: Set<number>; detail: string }
  >();
  private readonly lastLogAt = new Map<TurnedAwayReason, number>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly metrics: ForwarderMetrics,
    private readonly logger: Logger,
    private readonly intervalMs = 10_000,
  ) {}

  record(reason: TurnedAwayReason, port: number, detail: string): void {
    this.metrics.turnedAway.inc({ reason });
    const p = this.pending.get(reason) ?? { count: 0, ports: new Set<number>(), detail };
    p.count++;
    p.ports.add(port);
    p.detail = detail;
    this.pending.set(reason, p);
    const last = this.lastLogAt.get(reason) ?? -Infinity;
    if (performance.now() - last >= this.intervalMs) this.flush(reason);
    else this.timer ??= setTimeout(() => this.flushAll(), this.intervalMs).unref();
  }

  /** Logs what is pending now (also called on shutdown). */
  flushAll(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    for (const reason of [...this.pending.keys()]) this.flush(reason);
  }

  private flush(reason: TurnedAwayReason): void {
    const p = this.pending.get(reason);
    if (!p) return;
    this.pending.delete(reason);
    this.lastLogAt.set(reason, performance.now());
    this.logger.warn(
      {
        reason,
        count: p.count,
        ports: [...p.ports].sort((a, b) => a - b).slice(0, 20),
        detail: p.detail,
        interval_ms: this.intervalMs,
      },
      'forwarder turned clients away',
    );
  }

  stop(): void {
    this.flushAll();
  }
}
