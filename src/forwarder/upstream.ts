/**
 * What a forwarded connection talks to on the ingress side, whatever the protocol: a byte stream
 * that ends either cleanly (a FIN, END_STREAM) or with an abort (an RST, RST_STREAM), never one
 * read as the other. v1 is one (TLS) connection per client (`socketUpstream`); v2 one HTTP/2
 * CONNECT stream on a shared session (`upstream-v2.ts`).
 */
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { CancelSignal } from '../api/ingress/cancel.js';
import type { IngressSource } from '../api/ingress/protocol.js';
import { onCleanEnd, resetSocket } from '../api/ingress/reset.js';

export type IngressProtocol = 'v1' | 'v2';

/** How the far side of an upstream ended, told once each (`closed` last). */
export interface UpstreamEvents {
  /** The far side ended its direction cleanly; ours may still send. */
  cleanEnd(): void;
  /** The far side aborted, failed, or closed without a clean end. */
  aborted(reason: string): void;
  /** Both directions are over. */
  closed(): void;
}

export interface Upstream {
  readonly protocol: IngressProtocol;
  /** The bytes, both ways; paused until piped. Half-open capable. */
  readonly duplex: Duplex;
  /**
   * Resolves once the ingress reached the upstream; rejects with an IngressError when it did not.
   * v1 hands over an upstream only then; v2 at once (`early`), so the client's first bytes travel
   * with the request.
   */
  readonly confirmed: Promise<void>;
  /** True when bytes may be written before `confirmed` (they reach the upstream only if it resolves). */
  readonly early: boolean;
  /** True once it closed (nothing left to pipe). */
  readonly gone: boolean;
  /** Bytes moved both ways so far (for the idle sweep). */
  bytesMoved(): number;
  /** Starts telling `events`; call once, when piping starts. */
  watch(events: UpstreamEvents): void;
  /** Ends our direction cleanly (FIN, END_STREAM). */
  end(): void;
  /** Aborts both directions so the far side sees an abort (RST, RST_STREAM). */
  abort(): void;
}

/** Opens an upstream through the ingress as configured now. */
export type OpenUpstream = (
  url: string,
  source: IngressSource | undefined,
  timeoutMs: number,
  signal: CancelSignal,
  /** Called once the transport is up and the request sent (the handshake turn ends there). */
  onTransportUp?: () => void,
) => Promise<Upstream>;

const CONFIRMED = Promise.resolve();

/** v1: the socket the dialer handed back after the ingress's `ok` (already confirmed). */
export function socketUpstream(socket: Socket): Upstream {
  return {
    protocol: 'v1',
    duplex: socket,
    confirmed: CONFIRMED,
    early: false,
    get gone() {
      return socket.destroyed;
    },
    bytesMoved: () => socket.bytesRead + socket.bytesWritten,
    watch(events) {
      let ended = false;
      socket.on('error', (err: NodeJS.ErrnoException) => events.aborted(err.code ?? err.message));
      // A FIN is passed on only once it is known to be one (reset.ts); a hidden reset fails the
      // probe with an 'error', which aborts.
      socket.once('end', () => {
        ended = true;
        onCleanEnd(socket, () => events.cleanEnd());
      });
      socket.once('close', () => {
        if (!ended) events.aborted('closed without an end of stream');
        events.closed();
      });
    },
    end: () => socket.end(),
    abort: () => resetSocket(socket),
  };
}
