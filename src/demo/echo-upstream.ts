import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';

/** A TCP echo server standing in for an account's application behind an endpoint. */
export async function startEchoUpstream(host = '127.0.0.1'): Promise<{ url: string; stop(): Promise<void> }> {
  const server: Server = createServer({ allowHalfOpen: true }, (socket) => {
    socket.on('error', () => socket.destroy());
    socket.pipe(socket);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `tcp://${host}:${port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Connections still open would keep close() waiting forever.
        server.unref();
        resolve();
      }),
  };
}
