/**
 * The client side of the binding ingress: connect, send the preface, read the reply, and hand back
 * the socket positioned at the first byte of the stream. The forwarder uses this for every
 * connection it accepts.
 */
import { connect as tcpConnect, isIP, type Socket } from 'node:net';
import { connect as tlsConnect, type ConnectionOptions } from 'node:tls';
import {
  encodeLine,
  INGRESS_PROTOCOL_VERSION,
  LineReader,
  MAX_REPLY_BYTES,
  parseReply,
  type IngressSource,
} from './protocol.js';
import { parseHostPort } from '../../net/host-port.js';

/** A failed ingress connection: an ERR_7xx the ingress answered, or one the dialer observed (ERR_79x). */
export class IngressError extends Error {
  override readonly name = 'IngressError';

  constructor(
    /** ERR_7xx from the ingress's reply, or ERR_790–ERR_794 for conditions the dialer observed. */
    readonly code: string,
    readonly msg: string,
  ) {
    super(`${code}: ${msg}`);
  }

  /** True when the ingress answered (the code is its verdict), false for transport conditions. */
  get fromIngress(): boolean {
    return !/^ERR_79\d$/.test(this.code);
  }
}

export interface IngressTlsOptions {
  /** PEM of the CA (or self-signed certificate) to trust; default: the system's CAs. */
  ca?: string;
  /** SNI and the name checked against the certificate; default: the address's host (when not an IP). */
  servername?: string;
  /** Default true. */
  rejectUnauthorized?: boolean;
}

export interface ConnectThroughIngressOptions {
  /** `host:port`, IPv6 hosts in brackets. */
  address: string;
  authtoken: string;
  /** The endpoint URL, e.g. `http://name.namespace:80`. */
  url: string;
  /** Use TLS (required by the ingress unless it listens on loopback). */
  tls?: IngressTlsOptions;
  source?: IngressSource;
  signal?: AbortSignal;
  /** Bound on connect + TLS handshake + reply, in ms. Default 10 000. */
  timeoutMs?: number;
}

export const DEFAULT_DIAL_TIMEOUT_MS = 10_000;

/**
 * Opens a connection through the ingress. Resolves with the socket once the ingress answered
 * `ok`; the socket is paused, is half-open capable (`end()` sends only our FIN) and any bytes that
 * arrived after the reply line have been unshifted back into it. Rejects with an IngressError.
 */
export function connectThroughIngress(opts: ConnectThroughIngressOptions): Promise<Socket> {
  let target: { host: string; port: number };
  try {
    target = parseHostPort(opts.address);
  } catch (err) {
    return Promise.reject(err instanceof Error ? err : new Error(String(err)));
  }
  if (opts.signal?.aborted) {
    return Promise.reject(new IngressError('ERR_794', 'aborted before connecting'));
  }

  return new Promise<Socket>((resolve, reject) => {
    const timeoutMs = opts.timeoutMs ?? DEFAULT_DIAL_TIMEOUT_MS;
    const readyEvent = opts.tls ? 'secureConnect' : 'connect';
    let socket: Socket;
    if (opts.tls) {
      const servername = opts.tls.servername ?? (isIP(target.host) ? undefined : target.host);
      // allowHalfOpen works for tls.connect (it is passed to the TLSSocket) but @types/node omits it.
      const tlsOpts: ConnectionOptions & { allowHalfOpen: boolean } = {
        host: target.host,
        port: target.port,
        allowHalfOpen: true,
        ...(opts.tls.ca ? { ca: opts.tls.ca } : {}),
        ...(servername ? { servername } : {}),
        rejectUnauthorized: opts.tls.rejectUnauthorized ?? true,
      };
      socket = tlsConnect(tlsOpts);
    } else {
      socket = tcpConnect({ host: target.host, port: target.port, allowHalfOpen: true });
    }

    const reader = new LineReader(MAX_REPLY_BYTES);
    let connected = false;
    let settled = false;

    const cleanup = () => {
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      socket.off(readyEvent, onConnect);
      socket.off('data', onData);
      socket.off('error', onError);
      socket.off('end', onEnd);
      socket.off('close', onEnd);
    };
    const fail = (code: string, msg: string) => {
      if (settled) return;
      settled = true;
      cleanup();
      socket.destroy();
      reject(new IngressError(code, msg));
    };
    const onConnect = () => {
      connected = true;
      socket.setNoDelay(true);
      socket.write(
        encodeLine({
          v: INGRESS_PROTOCOL_VERSION,
          authtoken: opts.authtoken,
          url: opts.url,
          ...(opts.source ? { source: opts.source } : {}),
        }),
      );
    };
    const onData = (chunk: Buffer) => {
      const r = reader.push(chunk);
      if (r.kind === 'more') return;
      if (r.kind === 'too_long') {
        fail('ERR_792', `the ingress reply line is longer than ${MAX_REPLY_BYTES} bytes`);
        return;
      }
      const parsed = parseReply(r.line);
      if (!parsed.ok) return fail(parsed.code, parsed.msg);
      if (!parsed.value.ok) return fail(parsed.value.code, parsed.value.msg);
      settled = true;
      cleanup();
      socket.pause();
      if (r.rest.length > 0) socket.unshift(r.rest);
      resolve(socket);
    };
    const onError = (err: NodeJS.ErrnoException) =>
      connected
        ? fail('ERR_790', `the ingress connection failed before the reply (${err.code ?? err.message})`)
        : fail('ERR_793', `cannot connect to the ingress at ${opts.address}: ${err.code ?? err.message}`);
    const onEnd = () => fail('ERR_790', 'the ingress closed the connection before replying');
    const onAbort = () => fail('ERR_794', 'aborted by the caller');
    const timer = setTimeout(
      () => fail('ERR_791', `no reply from the ingress at ${opts.address} within ${timeoutMs} ms`),
      timeoutMs,
    );

    socket.once(readyEvent, onConnect);
    socket.on('data', onData);
    socket.on('error', onError);
    socket.on('end', onEnd);
    socket.on('close', onEnd);
    opts.signal?.addEventListener('abort', onAbort, { once: true });
  });
}
