import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { silentLogger, type Logger } from '../log/logger.js';
import { trackConnections } from '../net/graceful-close.js';
import { listen, type ListenAddress } from '../net/listen.js';
import { adminRoutes } from './admin/index.js';
import type { AdminRouteSpec } from './admin/context.js';
import { handleAdminRequest } from './admin/pipeline.js';
import { resolveMockConfig, type AccountConfig, type MockConfig, type MockConfigInput } from './config.js';
import { handlePublicRequest } from './http/pipeline.js';
import { ownListenersOf } from './ingress/own-listeners.js';
import { startIngress, type IngressServer } from './ingress/server.js';
import { Router } from './http/router.js';
import { publicRoutes } from './resources/index.js';
import { MockServices } from './services.js';

export interface MockApiOptions {
  config?: MockConfigInput;
  host?: string;
  /** 0 (default) lets the OS choose. */
  port?: number;
  /**
   * The admin interface listens only when this is given; on 127.0.0.1 unless `host` says
   * otherwise (never on the public API's host by default: it has no authentication).
   */
  admin?: { host?: string; port?: number } | undefined;
  /**
   * The binding ingress listens when this is given or the config sets `ingress.port` (plain TCP
   * on loopback unless config `ingress.tls`); these override the config's host, port, advertise.
   */
  ingress?: { host?: string; port?: number; advertise?: string };
  logger?: Logger;
  now?: () => number;
  /** How long stop() waits for in-flight requests before closing connections. */
  shutdownGraceMs?: number;
}

export interface MockApi {
  /**
   * Base URL of the public API, e.g. http://127.0.0.1:41234. Usable by a client: when the server
   * listens on every interface (0.0.0.0, ::), it names the loopback address instead.
   */
  url: string;
  /** True when the public API listens on every interface (`url` then shows loopback). */
  allInterfaces: boolean;
  adminUrl?: string;
  /** `host:port` the binding ingress listens on, when started. */
  ingressAddress?: string;
  /** `host:port` operators get at registration (`ingress.advertise`; default the listen address). */
  ingressAdvertiseAddress?: string;
  /** With the ingress's development certificate: its PEM, for clients to trust. */
  ingressCaPem?: string;
  /** Sends GOAWAY on every v2 (HTTP/2) session of the ingress: open streams finish, new ones go elsewhere. */
  ingressGoaway?: () => void;
  accounts: AccountConfig[];
  services: MockServices;
  stop(): Promise<void>;
}

/** A URL a client can use for a listening address: the wildcard addresses become loopback. */
function usableUrl(bound: ListenAddress): { url: string; allInterfaces: boolean } {
  if (bound.host === '0.0.0.0') return { url: `http://127.0.0.1:${bound.port}`, allInterfaces: true };
  if (bound.host === '[::]') return { url: `http://[::1]:${bound.port}`, allInterfaces: true };
  return { url: `http://${bound.address}`, allInterfaces: false };
}

/**
 * An HTTP server with the mock's connection limits. The body timeout itself is enforced per
 * request (src/mock/http/body.ts) so it answers with an error body; Node's own request timeout,
 * which answers a bare 408, is only a backstop behind it.
 */
function limitedServer(
  config: MockConfig,
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): Server {
  const requestTimeout = config.body_timeout_ms + 10_000;
  const server = createServer({ requestTimeout, headersTimeout: Math.min(60_000, requestTimeout) }, handler);
  server.maxConnections = config.max_connections;
  return server;
}

/** Starts the mock management API (and its admin interface when asked) on loopback. */
export async function startMockApi(opts: MockApiOptions = {}): Promise<MockApi> {
  const config = resolveMockConfig(opts.config);
  const log = opts.logger ?? silentLogger();
  const services = new MockServices(config, log, opts.now);
  const host = opts.host ?? '127.0.0.1';
  const lifecycle = { shuttingDown: false };

  const router = new Router().add(...publicRoutes());
  const server = limitedServer(config, (req, res) => {
    void handlePublicRequest(router, services, req, res, lifecycle);
  });
  const publicConnections = trackConnections(server);
  const { url, allInterfaces } = usableUrl(await listen(server, host, opts.port ?? 0));

  let admin: { close(graceMs: number): Promise<void> } | undefined;
  let adminUrl: string | undefined;
  if (opts.admin) {
    const adminRouter = new Router<AdminRouteSpec>().add(...adminRoutes());
    const publicBase = () => config.public_base_url?.replace(/\/+$/, '') ?? url;
    const adminServer = limitedServer(config, (req, res) => {
      void handleAdminRequest(adminRouter, services, publicBase, req, res);
    });
    admin = trackConnections(adminServer);
    adminUrl = usableUrl(await listen(adminServer, opts.admin.host ?? '127.0.0.1', opts.admin.port ?? 0)).url;
  }

  let ingress: IngressServer | undefined;
  if (opts.ingress || config.ingress.port !== undefined) {
    try {
      ingress = await startIngress(services, {
        ...opts.ingress,
        ownListeners: ownListenersOf(url, adminUrl, config.public_base_url),
      });
    } catch (err) {
      await Promise.all([publicConnections.close(0), admin?.close(0)]);
      throw err;
    }
    services.ingressAddress = ingress.advertiseAddress;
  }

  let stopping: Promise<void> | undefined;
  return {
    url,
    allInterfaces,
    ...(adminUrl ? { adminUrl } : {}),
    ...(ingress
      ? {
          ingressAddress: ingress.address,
          ingressAdvertiseAddress: ingress.advertiseAddress,
          ingressGoaway: () => ingress.goaway(),
        }
      : {}),
    ...(ingress?.caPem ? { ingressCaPem: ingress.caPem } : {}),
    accounts: config.accounts,
    services,
    stop() {
      stopping ??= (async () => {
        lifecycle.shuttingDown = true;
        await services.runShutdownHooks();
        const grace = opts.shutdownGraceMs ?? 2000;
        await Promise.all([publicConnections.close(grace), admin?.close(grace), ingress?.stop()]);
        log.info({ url }, 'mock api stopped');
      })();
      return stopping;
    },
  };
}
