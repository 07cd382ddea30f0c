import type { Server } from 'node:http';
import type { Socket } from 'node:net';

/**
 * Tracks which connections of an HTTP server are in the middle of a request, so that a
 * shutdown can close idle keep-alive connections at once (including ones that connected but
 * never sent a request) and give in-flight requests a grace period to finish.
 */
export function trackConnections(server: Server): { close(graceMs: number): Promise<void> } {
  const inFlight = new Map<Socket, number>();
  let closing = false;
  server.on('connection', (socket: Socket) => {
    inFlight.set(socket, 0);
    socket.once('close', () => inFlight.delete(socket));
  });
  server.on('request', (req, res) => {
    const socket = req.socket;
    inFlight.set(socket, (inFlight.get(socket) ?? 0) + 1);
    res.once('close', () => {
      const left = (inFlight.get(socket) ?? 1) - 1;
      inFlight.set(socket, left);
      if (closing && left === 0) socket.destroy();
    });
  });
  return {
    async close(graceMs: number) {
      closing = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const [socket, n] of inFlight) if (n === 0) socket.destroy();
      const timer = setTimeout(() => {
        for (const socket of inFlight.keys()) socket.destroy();
      }, graceMs);
      await closed;
      clearTimeout(timer);
    },
  };
}
