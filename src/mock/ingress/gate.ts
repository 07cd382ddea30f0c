/**
 * The ingress's door: every accepted TCP socket passes here before its TLS handshake or preface.
 * It refuses loops (a connection from one of our own upstream sockets) and sources over their
 * cap, admits the rest into the pending phase (evicting the oldest of the largest source when
 * full), and frees the slot when the socket closes.
 */
import type { Socket } from 'node:net';
import type { IngressErrorCode } from '../../api/error-codes/ingress.js';
import type { Logger } from '../../log/logger.js';
import type { MockConfig } from '../config.js';
import { Admission } from './admission.js';
import type { ConnectionSlot } from './connection.js';
import { CONNECTION_LOG_MSG } from './connection.js';
import { rejectConnection } from './handshake.js';
import type { OutboundSockets } from './loop-guard.js';
import { formatHostPort, normaliseIp } from './own-addresses.js';

/** How long an evicted or refused socket may take to receive its reply before it is destroyed. */
const REFUSAL_LINGER_MS = 200;

interface Entry {
  ticket: number;
  raw: Socket;
  evict: AbortController;
  slot: ConnectionSlot;
}

const peerKey = (address: string | undefined, port: number | undefined) => `${address ?? '?'}|${port ?? 0}`;

export class Gate {
  private readonly admission: Admission;
  private readonly byTicket = new Map<number, Entry>();
  /** TLS sessions are found by their peer address: a TLSSocket does not expose its raw socket. */
  private readonly byPeer = new Map<string, Entry>();

  constructor(
    private readonly config: MockConfig['ingress'],
    /** With TLS nothing can be answered before the handshake: refusals just close. */
    private readonly tls: boolean,
    private readonly outbound: OutboundSockets,
    private readonly log: Logger,
    private readonly isShuttingDown: () => boolean,
  ) {
    this.admission = new Admission({
      maxPending: config.max_handshakes,
      maxPendingPerSource: config.max_handshakes_per_source,
      maxEstablished: config.max_connections,
      maxEstablishedPerKey: config.max_connections_per_url,
    });
  }

  /** Admits a freshly accepted socket; returns its slot, or undefined when it was refused. */
  accept(raw: Socket): ConnectionSlot | undefined {
    raw.on('error', () => undefined);
    if (this.isShuttingDown()) return this.refuse(raw, 'ERR_741', 'the ingress is shutting down');
    if (this.outbound.isOutbound(raw)) {
      return this.refuse(
        raw,
        'ERR_733',
        "loop: this connection comes from the ingress's own upstream connection; " +
          'an endpoint upstream_url leads back to this ingress',
      );
    }
    const source = normaliseIp(raw.remoteAddress ?? '?');
    const admitted = this.admission.admit(source);
    if (!admitted.ok) {
      return this.refuse(
        raw,
        'ERR_743',
        `too many connections from ${source} are in their handshake or preface ` +
          `(max_handshakes_per_source ${this.config.max_handshakes_per_source}); retry later`,
      );
    }
    if (admitted.evicted !== undefined) this.evict(admitted.evicted);

    const { ticket } = admitted;
    const evict = new AbortController();
    const slot: ConnectionSlot = {
      evicted: evict.signal,
      promote: (key) => this.admission.promote(ticket, key),
      settle: () => this.admission.release(ticket),
    };
    const entry: Entry = { ticket, raw, evict, slot };
    const key = peerKey(raw.remoteAddress, raw.remotePort);
    this.byTicket.set(ticket, entry);
    this.byPeer.set(key, entry);
    raw.once('close', () => {
      this.admission.release(ticket);
      this.byTicket.delete(ticket);
      if (this.byPeer.get(key) === entry) this.byPeer.delete(key);
    });
    return slot;
  }

  /** The slot of a TLS session whose raw socket was admitted; undefined if it was dropped meanwhile. */
  slotOf(session: Socket): ConnectionSlot | undefined {
    return this.byPeer.get(peerKey(session.remoteAddress, session.remotePort))?.slot;
  }

  /** The TCP socket under a TLS session (to reset it: a TLS socket cannot send an RST itself). */
  rawOf(session: Socket): Socket | undefined {
    return this.byPeer.get(peerKey(session.remoteAddress, session.remotePort))?.raw;
  }

  /**
   * A slot for one v2 stream of `source` for `key` (account and URL): the same budgets as a v1
   * connection (max_connections, max_connections_per_url), without a handshake phase of its own.
   */
  streamSlot(
    source: string,
    key: string,
  ): { ok: true; release: () => void } | { ok: false; code: 'ERR_740' | 'ERR_744' } {
    const admitted = this.admission.admit(`stream ${source}`);
    if (!admitted.ok) return { ok: false, code: 'ERR_740' };
    if (admitted.evicted !== undefined) this.evict(admitted.evicted);
    const promoted = this.admission.promote(admitted.ticket, key);
    if (promoted !== 'ok') {
      this.admission.release(admitted.ticket);
      return { ok: false, code: promoted === 'share' ? 'ERR_744' : 'ERR_740' };
    }
    return { ok: true, release: () => this.admission.release(admitted.ticket) };
  }

  get pending(): number {
    return this.admission.pendingCount;
  }

  get established(): number {
    return this.admission.establishedCount;
  }

  /**
   * A connection reading its preface answers ERR_742 through the normal path (the abort); one
   * still in its TLS handshake, or lingering after a rejection, is simply closed a moment later.
   */
  private evict(ticket: number): void {
    const entry = this.byTicket.get(ticket);
    if (!entry) return;
    this.byTicket.delete(ticket);
    entry.evict.abort();
    setTimeout(() => entry.raw.destroy(), REFUSAL_LINGER_MS).unref();
  }

  private refuse(raw: Socket, code: IngressErrorCode, msg: string): undefined {
    this.log.warn(
      { outcome: 'rejected', code, remote: formatHostPort(raw.remoteAddress ?? '?', raw.remotePort ?? 0) },
      CONNECTION_LOG_MSG,
    );
    if (this.tls) raw.destroy();
    else rejectConnection(raw, code, msg, REFUSAL_LINGER_MS);
    return undefined;
  }
}
