/** The forwarder's health, readiness and metrics endpoints on one small HTTP server. */
import { createServer, type Server } from 'node:http';
import type { Registry } from 'prom-client';
import type { Logger } from '../log/logger.js';
import { listen, type ListenAddress } from '../net/listen.js';
import { trackConnections } from '../net/graceful-close.js';

export interface Readiness {
  ready: boolean;
  /** Why not ready (empty when ready): each names the cause, e.g. a port and its bind error. */
  reasons: string[];
}

export interface HealthServerOptions {
  host: string;
  port: number;
  registry: Registry;
  readiness: () => Readiness;
  /** Liveness: false only when the process cannot recover by itself. */
  healthy?: () => boolean;
  logger: Logger;
}

export interface HealthServer {
  address: ListenAddress;
  close(): Promise<void>;
}

export async function startHealthServer(opts: HealthServerOptions): Promise<HealthServer> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const send = (status: number, type: string, body: string) => {
      res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
      res.end(body);
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(405, 'text/plain', 'method not allowed\n');
    if (path === '/healthz') {
      const ok = opts.healthy?.() ?? true;
      return send(ok ? 200 : 503, 'text/plain', ok ? 'ok\n' : 'unhealthy\n');
    }
    if (path === '/readyz') {
      const r = opts.readiness();
      return send(r.ready ? 200 : 503, 'application/json', JSON.stringify(r) + '\n');
    }
    if (path === '/metrics') {
      opts.registry.metrics().then(
        (text) => send(200, opts.registry.contentType, text),
        (err: unknown) => {
          opts.logger.error({ error: String(err) }, 'forwarder metrics failed');
          send(500, 'text/plain', 'metrics failed\n');
        },
      );
      return;
    }
    send(404, 'text/plain', 'not found\n');
  });
  const tracked = trackConnections(server);
  const address = await listen(server, opts.host, opts.port);
  return { address, close: () => tracked.close(1_000) };
}
