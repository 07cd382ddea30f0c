/** The binding ingress listener: plain TCP on loopback, TLS with the development certificate anywhere. */
import { createServer as createTcpServer, type Server, type Socket } from 'node:net';
import { createServer as createTlsServer, type TLSSocket } from 'node:tls';
import { listen } from '../../net/listen.js';
import type { MockServices } from '../services.js';
import { CONNECTION_LOG_MSG, serveConnection } from './connection.js';
import { devCertificate } from '../../net/dev-cert.js';
import { rejectConnection } from './handshake.js';
import type { Piping } from './pipe.js';
import { PoolSelector } from './upstream.js';

export interface IngressOptions {
  /** Default 127.0.0.1. Plain TCP (config `ingress.tls: false`) is only allowed on a loopback host. */
  host?: string;
  /** 0 (default) lets the OS choose. */
  port?: number;
}

export interface IngressServer {
  /** `host:port` (IPv6 hosts in brackets), as handed to operators. */
  address: string;
  /** With TLS: the PEM of the self-signed development certificate, which clients trust as their CA. */
  caPem?: string;
  /** Stops listening and closes every connection, client and upstream sockets alike. */
  stop(): Promise<void>;
}

/** True for `localhost`, 127.0.0.0/8 and ::1 (also IPv4-mapped). */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (h === 'localhost' || h === '::1' || h === '0:0:0:0:0:0:0:1') return true;
  return /^(::ffff:)?127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/** Starts the binding ingress for the mock's accounts and endpoints. */
export async function startIngress(
  services: MockServices,
  opts: IngressOptions = {},
): Promise<IngressServer> {
  const config = services.config.ingress;
  const host = opts.host ?? '127.0.0.1';
  if (!config.tls && !isLoopbackHost(host)) {
    throw new Error(
      `the binding ingress may listen without TLS only on a loopback address, not on "${host}"; ` +
        'set ingress.tls: true in the mock config or listen on 127.0.0.1',
    );
  }
  const log = services.log.child({ component: 'ingress' });
  const pool = new PoolSelector();
  const rawSockets = new Set<Socket>();
  const upstreams = new Set<Socket>();
  const pipes = new Set<Piping>();
  let active = 0;
  let shuttingDown = false;

  const ctx = {
    services,
    config,
    pool,
    log,
    isShuttingDown: () => shuttingDown,
    trackPipe(p: Piping) {
      pipes.add(p);
      return () => pipes.delete(p);
    },
    trackUpstream(s: Socket) {
      upstreams.add(s);
      s.once('close', () => upstreams.delete(s));
    },
  };

  const onSession = (socket: Socket) => {
    if (shuttingDown) {
      rejectConnection(socket, 'ERR_741', 'the ingress is shutting down', 200);
      return;
    }
    if (active >= config.max_connections) {
      socket.on('error', () => undefined);
      log.warn(
        { outcome: 'rejected', code: 'ERR_740', max_connections: config.max_connections },
        CONNECTION_LOG_MSG,
      );
      rejectConnection(
        socket,
        'ERR_740',
        `the ingress is at its limit of ${config.max_connections} connections; retry later`,
      );
      return;
    }
    active++;
    void serveConnection(socket, ctx).finally(() => active--);
  };

  let caPem: string | undefined;
  let server: Server;
  if (config.tls) {
    const cert = await devCertificate();
    caPem = cert.cert;
    server = createTlsServer(
      { key: cert.key, cert: cert.cert, allowHalfOpen: true, handshakeTimeout: config.preface_timeout_ms },
      (s: TLSSocket) => onSession(s),
    );
    server.on('tlsClientError', (err: NodeJS.ErrnoException, s: TLSSocket) => {
      log.debug({ remote: s.remoteAddress, error: err.code ?? err.message }, 'ingress tls handshake failed');
      s.destroy();
    });
  } else {
    server = createTcpServer({ allowHalfOpen: true, pauseOnConnect: true }, onSession);
  }
  server.on('connection', (s: Socket) => {
    rawSockets.add(s);
    s.once('close', () => rawSockets.delete(s));
  });
  const { address } = await listen(server, host, opts.port ?? 0);
  log.info({ address, tls: config.tls }, 'binding ingress listening');

  let stopping: Promise<void> | undefined;
  return {
    address,
    ...(caPem ? { caPem } : {}),
    stop() {
      stopping ??= (async () => {
        shuttingDown = true;
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        for (const p of pipes) p.abort();
        for (const s of upstreams) s.destroy();
        for (const s of rawSockets) s.destroy();
        await closed;
        log.info({ address }, 'binding ingress stopped');
      })();
      return stopping;
    },
  };
}
