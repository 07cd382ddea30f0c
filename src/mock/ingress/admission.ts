/**
 * Who holds a slot of the ingress. A connection is *pending* from accept (TLS handshake included)
 * until its preface names a valid authtoken, and only then takes one of the `max_connections`
 * *established* slots. Pending connections have their own smaller cap and a per-source cap, so
 * sockets that never authenticate cannot keep authenticated streams out. Pure bookkeeping; the
 * ingress maps tickets to sockets.
 */

export interface AdmissionLimits {
  /** Pending connections at once (`max_handshakes`). */
  maxPending: number;
  /** Pending connections from one source address (`max_handshakes_per_source`). */
  maxPendingPerSource: number;
  /** Established connections (`max_connections`). */
  maxEstablished: number;
  /** Established connections of one key, an account's endpoint URL (`max_connections_per_url`). */
  maxEstablishedPerKey: number;
}

export type AdmitResult =
  /** `evicted`: a pending ticket dropped to make room; its connection must be closed. */
  | { ok: true; ticket: number; evicted?: number }
  /** The source already holds `maxPendingPerSource` pending connections. */
  | { ok: false };

/** `gone`: the ticket was evicted (or released) before it authenticated; `share`: its key holds its share. */
export type PromoteResult = 'ok' | 'full' | 'share' | 'gone';

export class Admission {
  private nextTicket = 1;
  /** Pending tickets and their source; tickets only grow, so a smaller ticket is older. */
  private readonly pending = new Map<number, string>();
  /** Pending tickets per source, oldest first (a Set keeps insertion order). */
  private readonly bySource = new Map<string, Set<number>>();
  /** Established tickets and their key. */
  private readonly established = new Map<number, string>();
  private readonly perKey = new Map<string, number>();

  constructor(private readonly limits: AdmissionLimits) {}

  /**
   * Admits a new connection from `source` into the pending phase. When every pending slot is
   * taken, the oldest pending connection of the source holding the most is evicted: a flood from
   * a few addresses evicts its own sockets, and a forwarder with one connection in its handshake
   * is only evicted when every source holds just as few.
   */
  admit(source: string): AdmitResult {
    if ((this.bySource.get(source)?.size ?? 0) >= this.limits.maxPendingPerSource) return { ok: false };
    let evicted: number | undefined;
    if (this.pending.size >= this.limits.maxPending) {
      evicted = this.victim();
      if (evicted !== undefined) this.release(evicted);
    }
    const ticket = this.nextTicket++;
    this.pending.set(ticket, source);
    let mine = this.bySource.get(source);
    if (!mine) this.bySource.set(source, (mine = new Set()));
    mine.add(ticket);
    return evicted === undefined ? { ok: true, ticket } : { ok: true, ticket, evicted };
  }

  /**
   * Moves an authenticated connection from pending to established under `key` (its account's
   * endpoint URL). A key past its share is refused even while other slots are free: they are
   * kept for the other endpoints.
   */
  promote(ticket: number, key: string): PromoteResult {
    if (!this.pending.has(ticket)) return 'gone';
    this.release(ticket);
    if (this.established.size >= this.limits.maxEstablished) return 'full';
    const held = this.perKey.get(key) ?? 0;
    if (held >= this.limits.maxEstablishedPerKey) return 'share';
    this.established.set(ticket, key);
    this.perKey.set(key, held + 1);
    return 'ok';
  }

  /** Frees the ticket's slot, whatever phase it is in. Idempotent. */
  release(ticket: number): void {
    const key = this.established.get(ticket);
    if (key !== undefined) {
      this.established.delete(ticket);
      const n = (this.perKey.get(key) ?? 1) - 1;
      if (n > 0) this.perKey.set(key, n);
      else this.perKey.delete(key);
    }
    const source = this.pending.get(ticket);
    if (source === undefined) return;
    this.pending.delete(ticket);
    const mine = this.bySource.get(source);
    mine?.delete(ticket);
    if (mine?.size === 0) this.bySource.delete(source);
  }

  get pendingCount(): number {
    return this.pending.size;
  }

  get establishedCount(): number {
    return this.established.size;
  }

  private victim(): number | undefined {
    let best: { size: number; oldest: number } | undefined;
    for (const tickets of this.bySource.values()) {
      const oldest = tickets.values().next().value;
      if (oldest === undefined) continue;
      if (!best || tickets.size > best.size || (tickets.size === best.size && oldest < best.oldest)) {
        best = { size: tickets.size, oldest };
      }
    }
    return best?.oldest;
  }
}
