/**
 * Loop detection by local-port bookkeeping: the ingress remembers the local address and port of
 * every upstream socket it opens, and a connection arriving *from* one of them is the ingress
 * dialling itself (through an address the own-listener check could not recognise, such as a NAT
 * or a Kubernetes Service that leads back to this process).
 */
import type { Socket } from 'node:net';
import { normaliseIp } from './own-addresses.js';

const key = (address: string, port: number) => `${normaliseIp(address)}|${port}`;

export class OutboundSockets {
  /** Sockets whose local port is known, by `ip|port`. */
  private readonly known = new Map<string, Socket>();
  /** Sockets not yet connected: their local port may not be readable until connect() is issued. */
  private readonly connecting = new Set<Socket>();

  /** Registers an upstream socket right after `net.connect()`; forgets it when it closes. */
  add(socket: Socket): void {
    this.connecting.add(socket);
    let k: string | undefined;
    socket.once('connect', () => {
      this.connecting.delete(socket);
      if (socket.localAddress && socket.localPort) {
        k = key(socket.localAddress, socket.localPort);
        this.known.set(k, socket);
      }
    });
    socket.once('close', () => {
      this.connecting.delete(socket);
      if (k !== undefined && this.known.get(k) === socket) this.known.delete(k);
    });
  }

  /**
   * True when `remoteAddress:remotePort` of an accepted connection is one of our upstream sockets.
   * The accept can be processed before the dialling side's 'connect' event, so sockets still
   * connecting are asked for their local address directly (the kernel assigned it at connect()).
   */
  isOutbound(remoteAddress: string | undefined, remotePort: number | undefined): boolean {
    if (!remoteAddress || !remotePort) return false;
    const k = key(remoteAddress, remotePort);
    if (this.known.has(k)) return true;
    for (const s of this.connecting) {
      if (s.localAddress && s.localPort && key(s.localAddress, s.localPort) === k) return true;
    }
    return false;
  }

  get size(): number {
    return this.known.size + this.connecting.size;
  }
}
