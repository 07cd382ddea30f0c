import type { AddressInfo, Server } from 'node:net';

/** Where a server listens: `host` is bracketed for IPv6 so `${host}:${port}` is always an address. */
export interface ListenAddress {
  host: string;
  port: number;
  /** `host:port` */
  address: string;
}

/** Listens on host:port (0 lets the OS choose) and resolves with the address actually bound. */
export function listen(server: Server, host: string, port: number): Promise<ListenAddress> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      const addr = server.address() as AddressInfo;
      const h = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
      resolve({ host: h, port: addr.port, address: `${h}:${addr.port}` });
    });
  });
}
