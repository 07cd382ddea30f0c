/** The binding ingress listener: plain TCP on loopback, TLS (development or configured certificate) anywhere. */
import { createServer as createTcpServer, type Server, type Socket } from 'node:net';
import { createServer as createTlsServer, type TLSSocket } from 'node:tls';
import { linkRawSocket, resetSocket } from '../../api/ingress/reset.js';
import { isLoopbackHost } from '../../net/host-port.js';
import { listen } from '../../net/listen.js';
import type { MockServices } from '../services.js';
import { advertisedAddress } from './advertise.js';
import { serveConnection, type ConnectionContext, type ConnectionSlot } from './connection.js';
import { Gate } from './gate.js';
import { OutboundSockets } from './loop-guard.js';
import type { OwnListener } from './own-addresses.js';
import type { Piping } from './pipe.js';
import { IngressConfigError, loadTlsMaterial } from './tls-material.js';
import { dialUpstream, PoolSelector } from './upstream.js';
import { createH2Ingress, type H2Options } from './h2.js';
import { ALPN_H2 } from '../../api/ingress/v2-protocol.js';

export interface IngressOptions {
  /** Default: config `ingress.host`, else 127.0.0.1. Plain TCP is only allowed on a loopback host. */
  host?: string;
  /** Default: config `ingress.port`, else 0 (the OS chooses). */
  port?: number;
  /** `host[:port]` returned to operators; default: config `ingress.advertise`, else the listen address. */
  advertise?: string;
  /** The server's other listeners (public API, admin); upstreams reaching them are refused. */
  ownListeners?: readonly OwnListener[];
}

export interface IngressServer {
  /** `host:port` the ingress listens on (IPv6 hosts in brackets). */
  address: string;
  /** `host:port` handed to operators at registration. */
  advertiseAddress: string;
  /** With the development certificate: its PEM, which clients trust as their CA. */
  caPem?: string;
  /** Sends GOAWAY on every v2 session: they take no new streams, open streams finish. */
  goaway(): void;
  /** Stops listening and closes every connection, client and upstream sockets alike. */
  stop(): Promise<void>;
}

/** Starts the binding ingress for the mock's accounts and endpoints. */
export async function startIngress(
  services: MockServices,
  opts: IngressOptions = {},
): Promise<IngressServer> {
  const config = services.config.ingress;
  const host = opts.host ?? config.host ?? '127.0.0.1';
  if (config.tls === false && !isLoopbackHost(host)) {
    throw new IngressConfigError(
      `the binding ingress may listen without TLS only on a loopback address, not on "${host}"; ` +
        'turn TLS on (ingress.tls in the mock config, --ingress-tls or --ingress-cert/--ingress-key) ' +
        'or listen on 127.0.0.1',
    );
  }
  const tls = await loadTlsMaterial(config.tls);
  const log = services.log.child({ component: 'ingress' });
  const rawSockets = new Set<Socket>();
  const upstreams = new Set<Socket>();
  const pipes = new Set<Piping>();
  const outbound = new OutboundSockets();
  let shuttingDown = false;
  const gate = new Gate(config, tls !== undefined, outbound, log, () => shuttingDown);
  // Filled in once the ingress knows its own address (it is on the list too).
  const ownListeners: OwnListener[] = [...(opts.ownListeners ?? [])];

  const ctx: ConnectionContext = {
    services,
    config,
    pool: new PoolSelector(),
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
    dial: (target) => dialUpstream(target, config.dial_timeout_ms, { ownListeners, outbound }),
  };
  const h2 = createH2Ingress(ctx, gate, h2Options(config));
  if (config.h2) ctx.h2 = (socket) => h2.accept(socket);
  const serve = (socket: Socket, slot: ConnectionSlot) => void serveConnection(socket, ctx, slot);

  let server: Server;
  if (tls) {
    server = createTlsServer(
      {
        key: tls.key,
        cert: tls.cert,
        allowHalfOpen: true,
        handshakeTimeout: config.preface_timeout_ms,
        // v2 when the client offers h2; a client without ALPN is spoken to in v1.
        ...(config.h2 ? { ALPNProtocols: [ALPN_H2] } : {}),
      },
      (s: TLSSocket) => {
        const slot = gate.slotOf(s);
        const raw = gate.rawOf(s);
        if (raw) linkRawSocket(s, raw);
        if (!slot) s.destroy();
        else if (s.alpnProtocol === ALPN_H2) {
          slot.settle();
          h2.accept(s);
        } else serve(s, slot);
      },
    );
    server.on('tlsClientError', (err: NodeJS.ErrnoException, s: TLSSocket) => {
      log.debug({ remote: s.remoteAddress, error: err.code ?? err.message }, 'ingress tls handshake failed');
      s.destroy();
    });
  } else {
    server = createTcpServer({ allowHalfOpen: true, pauseOnConnect: true });
  }
  // Runs for the raw socket before any TLS byte or preface is read, so the handshake phase is
  // counted in both modes.
  server.on('connection', (raw: Socket) => {
    rawSockets.add(raw);
    raw.once('close', () => rawSockets.delete(raw));
    const slot = gate.accept(raw);
    if (slot && !tls) serve(raw, slot);
  });

  const bound = await listen(server, host, opts.port ?? config.port ?? 0);
  let advertiseAddress: string;
  try {
    advertiseAddress = advertisedAddress(opts.advertise ?? config.advertise, bound.address, bound.port);
  } catch (err) {
    server.close();
    throw new IngressConfigError(err instanceof Error ? err.message : String(err));
  }
  ownListeners.push({ label: 'binding ingress', host: bound.host, port: bound.port });
  if (advertiseAddress !== bound.address) {
    const [, advHost, advPort] = /^(.*):(\d+)$/.exec(advertiseAddress)!;
    ownListeners.push({
      label: 'binding ingress (advertised address)',
      host: advHost!,
      port: Number(advPort),
    });
  }
  log.info(
    {
      address: bound.address,
      advertise: advertiseAddress,
      tls: tls !== undefined,
      // A certificate is public; logged so a client of `mock-api --ingress-tls` can trust it.
      ...(tls?.caPem ? { ca_pem: tls.caPem } : {}),
    },
    'binding ingress listening',
  );

  let stopping: Promise<void> | undefined;
  return {
    address: bound.address,
    advertiseAddress,
    ...(tls?.caPem ? { caPem: tls.caPem } : {}),
    goaway: () => h2.goaway(),
    stop() {
      stopping ??= (async () => {
        shuttingDown = true;
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        // Cut streams are aborts: every side gets a reset, never a FIN it could read as a clean end.
        for (const p of pipes) p.abort();
        h2.destroy();
        for (const s of upstreams) resetSocket(s);
        for (const s of rawSockets) resetSocket(s);
        await closed;
        log.info({ address: bound.address }, 'binding ingress stopped');
      })();
      return stopping;
    },
  };
}

function h2Options(config: ConnectionContext['config']): H2Options {
  return {
    maxConcurrentStreams: config.h2_max_concurrent_streams,
    windowBytes: config.h2_window_bytes,
    answerDelayMs: config.h2_answer_delay_ms,
    ...(config.h2_session_stream_budget !== undefined
      ? { sessionStreamBudget: config.h2_session_stream_budget }
      : {}),
  };
}
