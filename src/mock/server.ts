import { createServer } from 'node:http';
import { silentLogger, type Logger } from '../log/logger.js';
import { trackConnections } from '../net/graceful-close.js';
import { listen } from '../net/listen.js';
import { adminRoutes } from './admin/index.js';
import type { AdminRouteSpec } from './admin/context.js';
import { handleAdminRequest } from './admin/pipeline.js';
import { resolveMockConfig, type AccountConfig, type MockConfigInput } from './config.js';
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
  /** The admin interface listens only when this is given. */
  admin?: { host?: string; port?: number };
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
  /** Base URL of the public API, e.g. http://127.0.0.1:41234 */
  url: string;
  adminUrl?: string;
  /** `host:port` the binding ingress listens on, when started. */
  ingressAddress?: string;
  /** `host:port` operators get at registration (`ingress.advertise`; default the listen address). */
  ingressAdvertiseAddress?: string;
  /** With the ingress's development certificate: its PEM, for clients to trust. */
  ingressCaPem?: string;
  accounts: AccountConfig[];
  services: MockServices;
  stop(): Promise<void>;
}

/** Starts the mock management API (and its admin interface when asked) on loopback. */
export async function startMockApi(opts: MockApiOptions = {}): Promise<MockApi> {
  const config = resolveMockConfig(opts.config);
  const log = opts.logger ?? silentLogger();
  const services = new MockServices(config, log, opts.now);
  const host = opts.host ?? '127.0.0.1';
  const lifecycle = { shuttingDown: false };

  const router = new Router().add(...publicRoutes());
  const server = createServer((req, res) => {
    void handlePublicRequest(router, services, req, res, lifecycle);
  });
  const publicConnections = trackConnections(server);
  const url = `http://${(await listen(server, host, opts.port ?? 0)).address}`;

  let admin: { close(graceMs: number): Promise<void> } | undefined;
  let adminUrl: string | undefined;
  if (opts.admin) {
    const adminRouter = new Router<AdminRouteSpec>().add(...adminRoutes());
    const publicBase = () => config.public_base_url?.replace(/\/+$/, '') ?? url;
    const adminServer = createServer((req, res) => {
      void handleAdminRequest(adminRouter, services, publicBase, req, res);
    });
    admin = trackConnections(adminServer);
    adminUrl = `http://${(await listen(adminServer, opts.admin.host ?? '127.0.0.1', opts.admin.port ?? 0)).address}`;
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
    ...(adminUrl ? { adminUrl } : {}),
    ...(ingress
      ? { ingressAddress: ingress.address, ingressAdvertiseAddress: ingress.advertiseAddress }
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
