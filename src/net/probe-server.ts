/**
 * The one probe server of the repository: `/healthz`, `/readyz`, `/metrics` and extra JSON routes,
 * used by the controller and the forwarder alike, so both answer probes with one body shape:
 * `{"ready": bool, "reasons": [...], ...detail}` (`healthy` for `/healthz`).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Registry } from 'prom-client';
import { trackConnections } from './graceful-close.js';
import { isWildcardHost } from './host-port.js';
import { listen, type ListenAddress } from './listen.js';

/** The answer of one probe: `reasons` is empty when `ok`, otherwise each names a cause a person can act on. */
export interface ProbeResult {
  ok: boolean;
  reasons: string[];
  /** Extra fields shown in the body beside `ready`/`healthy` and `reasons`. */
  detail?: Record<string, unknown>;
}

export interface ProbeServerOptions {
  host: string;
  port: number;
  registry: Registry;
  /** Liveness: false only when the process cannot recover by itself. Default: always healthy. */
  healthy?: () => ProbeResult;
  ready: () => ProbeResult;
  /** Extra GET routes answered with the JSON of what the function returns (`/status`). */
  json?: Record<string, (query: URLSearchParams) => unknown>;
}

export interface ProbeServer {
  address: ListenAddress;
  /** `http://host:port`, with a loopback host when listening on every interface. */
  url: string;
  close(): Promise<void>;
}

function send(res: ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
  res.end(body);
}

export function probeBody(key: 'ready' | 'healthy', r: ProbeResult): string {
  return `${JSON.stringify({ [key]: r.ok, reasons: r.reasons, ...r.detail })}\n`;
}

export async function startProbeServer(opts: ProbeServerOptions): Promise<ProbeServer> {
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://probe');
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('allow', 'GET, HEAD');
      send(res, 405, 'text/plain', 'method not allowed\n');
      return;
    }
    if (url.pathname === '/healthz') {
      const r = opts.healthy?.() ?? { ok: true, reasons: [] };
      send(res, r.ok ? 200 : 503, 'application/json', probeBody('healthy', r));
      return;
    }
    if (url.pathname === '/readyz') {
      const r = opts.ready();
      send(res, r.ok ? 200 : 503, 'application/json', probeBody('ready', r));
      return;
    }
    if (url.pathname === '/metrics') {
      send(res, 200, opts.registry.contentType, await opts.registry.metrics());
      return;
    }
    const route = opts.json?.[url.pathname];
    if (route) {
      send(res, 200, 'application/json', `${JSON.stringify(await route(url.searchParams), null, 2)}\n`);
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
  const address = await listen(server, opts.host, opts.port);
  const shown = isWildcardHost(address.host) ? `127.0.0.1:${address.port}` : address.address;
  return { address, url: `http://${shown}`, close: () => tracker.close(1_000) };
}
