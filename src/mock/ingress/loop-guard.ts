/**
 * Loop detection by connection bookkeeping: the ingress remembers every upstream socket it opens,
 * and a connection it accepts that is the other end of one of them is the ingress dialling
 * itself (through an address the own-listener check could not recognise).
 *
 * The match is on the full 4-tuple: the accepted connection's remote address and port must be the
 * upstream socket's local ones AND its local address and port the upstream socket's remote ones.
 * The local half alone is not enough: on one host the kernel hands the same ephemeral port to
 * connections towards different destinations, so a genuine client can arrive from the very
 * address and port of one of our upstream sockets. A loop through address translation (a NAT, a
 * Kubernetes Service) changes the destination and is not recognised here; it is bounded by the
 * preface (each hop needs one more valid preface in the stream) and the ingress's limits.
 */
import type { Socket } from 'node:net';
import { normaliseIp } from './own-addresses.js';

interface Endpoints {
  localAddress?: string | undefined;
  localPort?: number | undefined;
  remoteAddress?: string | undefined;
  remotePort?: number | undefined;
}

const tupleKey = (localIp: string, localPort: number, remoteIp: string, remotePort: number) =>
  `${normaliseIp(localIp)}|${localPort}|${normaliseIp(remoteIp)}|${remotePort}`;

export class OutboundSockets {
  /** Connected sockets by their 4-tuple `local|port|remote|port`. */
  private readonly known = new Map<string, Socket>();
  /** Sockets not yet connected, with the addresses they may reach (the checked ones) and the port. */
  private readonly connecting = new Map<Socket, { addresses: Set<string>; port: number }>();

  /**
   * Registers an upstream socket right after `net.connect()`; forgets it when it closes.
   * `target`: the addresses it was allowed to connect to and the port.
   */
  add(socket: Socket, target: { addresses: readonly string[]; port: number }): void {
    this.connecting.set(socket, { addresses: new Set(target.addresses.map(normaliseIp)), port: target.port });
    let k: string | undefined;
    socket.once('connect', () => {
      this.connecting.delete(socket);
      const { localAddress, localPort, remoteAddress, remotePort } = socket;
      if (localAddress && localPort && remoteAddress && remotePort) {
        k = tupleKey(localAddress, localPort, remoteAddress, remotePort);
        this.known.set(k, socket);
      }
    });
    socket.once('close', () => {
      this.connecting.delete(socket);
      if (k !== undefined && this.known.get(k) === socket) this.known.delete(k);
    });
  }

  /**
   * True when the accepted connection `accepted` is the far end of one of our upstream sockets.
   * The accept can be processed before the dialling side's 'connect' event; a socket still
   * connecting has no remote address yet (Node hides it), so its local address (assigned by the
   * kernel at connect()) is compared with the accepted remote, and the accepted local address
   * with the addresses it was allowed to reach.
   */
  isOutbound(accepted: Endpoints): boolean {
    const { localAddress, localPort, remoteAddress, remotePort } = accepted;
    if (!localAddress || !localPort || !remoteAddress || !remotePort) return false;
    if (this.known.has(tupleKey(remoteAddress, remotePort, localAddress, localPort))) return true;
    const remote = normaliseIp(remoteAddress);
    const local = normaliseIp(localAddress);
    for (const [s, target] of this.connecting) {
      if (
        target.port === localPort &&
        target.addresses.has(local) &&
        s.localPort === remotePort &&
        s.localAddress !== undefined &&
        normaliseIp(s.localAddress) === remote
      )
        return true;
    }
    return false;
  }

  get size(): number {
    return this.known.size + this.connecting.size;
  }
}
