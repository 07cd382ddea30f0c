import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Registry } from 'prom-client';
import { trackConnections } from '../net/graceful-close.js';
import { listen, type ListenAddress } from '../net/listen.js';

export interface ProbeHandlers {
  /** Liveness: false only when the process is wedged. */
  healthy: () => { ok: boolean; detail: Record<string, unknown> };
  ready: () => { ok: boolean; detail: Record<string, unknown> };
  /** Extra JSON routes (`/status`). */
  json?: Record<string, () => unknown>;
  registry: Registry;
}

export interface ProbeServer {
  address: ListenAddress;
  url: string;
  close(): Promise<void>;
}

function send(res: ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
  res.end(body);
}

/** `/healthz`, `/readyz`, `/metrics` and the given JSON routes; GET only. */
export async function startProbeServer(host: string, port: number, h: ProbeHandlers): Promise<ProbeServer> {
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = (req.url ?? '/').split('?')[0]!;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('allow', 'GET, HEAD');
      send(res, 405, 'text/plain', 'method not allowed\n');
      return;
    }
    if (path === '/healthz' || path === '/readyz') {
      const r = path === '/healthz' ? h.healthy() : h.ready();
      send(res, r.ok ? 200 : 503, 'application/json', `${JSON.stringify({ ok: r.ok, ...r.detail })}\n`);
      return;
    }
    if (path === '/metrics') {
      send(res, 200, h.registry.contentType, await h.registry.metrics());
      return;
    }
    const route = h.json?.[path];
    if (route) {
      send(res, 200, 'application/json', `${JSON.stringify(route(), null, 2)}\n`);
      return;
    }
    send(res, 404, 'text/plain', 'not found\n');
  };
  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent)
        send(res, 500, 'text/plain', `${err instanceof Error ? err.message : String(err)}\n`);
      else res.destroy();
    });
  });
  const tracker = trackConnections(server);
  const address = await listen(server, host, port);
  const shown =
    address.host === '0.0.0.0' || address.host === '[::]' ? `127.0.0.1:${address.port}` : address.address;
  return { address, url: `http://${shown}`, close: () => tracker.close(1_000) };
}
