/**
 * The client side of the binding ingress: connect, send the preface, read the reply, and hand back
 * the socket positioned at the first byte of the stream. The forwarder uses this for every
 * connection it accepts.
 */
import { connect as tcpConnect, isIP, type Socket } from 'node:net';
import { connect as tlsConnect, type ConnectionOptions, type SecureContext } from 'node:tls';
import {
  encodeLine,
  INGRESS_PROTOCOL_VERSION,
  LineReader,
  MAX_REPLY_BYTES,
  parseReply,
  type IngressSource,
} from './protocol.js';
import { parseHostPort } from '../../net/host-port.js';
import type { CancelSignal } from './cancel.js';
import { linkRawSocket } from './reset.js';
import type { IngressTlsSettings, TlsSessionCache } from './tls-client.js';

/** A failed ingress connection: an ERR_7xx the ingress answered, or one the dialer observed (ERR_79x). */
export class IngressError extends Error {
  override readonly name = 'IngressError';

  constructor(
    /** ERR_7xx from the ingress's reply, or ERR_790–ERR_795 for conditions the dialer observed. */
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

export interface IngressTlsOptions extends IngressTlsSettings {
  /** Built once by the caller (`reusableTls`); without it one is built from `ca` per connection. */
  secureContext?: SecureContext;
  /** Sessions to resume and to remember; without it every connection runs a full handshake. */
  sessions?: TlsSessionCache;
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
  /** An AbortSignal, or a cheaper `Cancellation` (cancel.ts). */
  signal?: CancelSignal;
  /** Bound on connect + TLS handshake + reply, in ms. Default 10 000. */
  timeoutMs?: number;
  /**
   * Called once the transport is up (TCP, and TLS when used) and the preface is written: the
   * handshake is over and what remains is the ingress's answer (its upstream connect included).
   */
  onTransportUp?: () => void;
}

export const DEFAULT_DIAL_TIMEOUT_MS = 10_000;

/**
 * OpenSSL's and Node's names for a certificate the client refused (untrusted, expired, wrong
 * name). Those last until someone changes the certificate or the CA bundle: never retried.
 */
const CERTIFICATE_ERROR = /CERT|SIGNATURE|ISSUER|INVALID_CA|ALTNAME|HOSTNAME|SELF_SIGNED|VERIFY/;

export function isCertificateError(code: string | undefined): boolean {
  return code !== undefined && CERTIFICATE_ERROR.test(code);
}

/** OpenSSL's names for a server that answered the ClientHello with something that is not TLS. */
const NOT_TLS_ERROR =
  /WRONG_VERSION_NUMBER|PACKET_LENGTH_TOO_LONG|UNKNOWN_PROTOCOL|HTTP_REQUEST|RECORD_LAYER_FAILURE/;

export function isNotTlsError(code: string | undefined): boolean {
  return code !== undefined && NOT_TLS_ERROR.test(code);
}

type Phase = 'connect' | 'handshake' | 'reply';

const ignore = (): void => undefined;

/**
 * Opens a connection through the ingress. Resolves with the socket once the ingress answered
 * `ok`; the socket is paused, is half-open capable (`end()` sends only our FIN) and any bytes that
 * arrived after the reply line have been unshifted back into it. Rejects with an IngressError.
 *
 * Every error the sockets can still emit is handled, before and after the promise settles: a TLS
 * error queued while the peer closes during the handshake arrives after the close, and must not
 * find a socket without an 'error' listener (that would end the process).
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
    const raw = tcpConnect({ host: target.host, port: target.port, allowHalfOpen: true });
    raw.on('error', ignore);
    let socket: Socket = raw;
    let sessionKey: string | undefined;
    const tls = opts.tls;
    if (tls) {
      const servername = tls.servername ?? (isIP(target.host) ? undefined : target.host);
      sessionKey = `${opts.address}|${servername ?? ''}`;
      const session = tls.sessions?.get(sessionKey);
      // The TLS layer runs over our own TCP socket so that an abort can reset it (reset.ts).
      // allowHalfOpen works for tls.connect (it is passed to the TLSSocket) but @types/node omits it.
      const tlsOpts: ConnectionOptions & { allowHalfOpen: boolean } = {
        socket: raw,
        host: target.host,
        allowHalfOpen: true,
        ...(tls.secureContext ? { secureContext: tls.secureContext } : tls.ca ? { ca: tls.ca } : {}),
        ...(servername ? { servername } : {}),
        ...(session ? { session } : {}),
        rejectUnauthorized: tls.rejectUnauthorized ?? true,
      };
      socket = tlsConnect(tlsOpts);
      socket.on('error', ignore);
      linkRawSocket(socket, raw);
      const sessions = tls.sessions;
      const key = sessionKey;
      if (sessions) socket.on('session', (s: Buffer) => sessions.set(key, s));
    }

    const reader = new LineReader(MAX_REPLY_BYTES);
    let phase: Phase = 'connect';
    let settled = false;

    const cleanup = () => {
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      raw.off('connect', onTcpConnect);
      socket.off('secureConnect', onReady);
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
      raw.destroy();
      reject(new IngressError(code, msg));
    };
    const onTcpConnect = () => {
      raw.setNoDelay(true);
      if (tls) phase = 'handshake';
      else onReady();
    };
    const onReady = () => {
      phase = 'reply';
      socket.write(
        encodeLine({
          v: INGRESS_PROTOCOL_VERSION,
          authtoken: opts.authtoken,
          url: opts.url,
          ...(opts.source ? { source: opts.source } : {}),
        }),
      );
      opts.onTransportUp?.();
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
    const onError = (err: NodeJS.ErrnoException) => {
      const reason = err.code ?? err.message;
      if (isCertificateError(err.code)) {
        if (sessionKey) tls?.sessions?.delete(sessionKey);
        return fail('ERR_795', `the ingress certificate at ${opts.address} was refused: ${reason}`);
      }
      if (phase === 'connect')
        return fail('ERR_793', `cannot connect to the ingress at ${opts.address}: ${reason}`);
      if (phase === 'handshake' && isNotTlsError(err.code)) {
        if (sessionKey) tls?.sessions?.delete(sessionKey);
        return fail(
          'ERR_796',
          `the ingress at ${opts.address} does not speak TLS (${reason}); set ingress.tls to false for a plain loopback ingress, or point ingress.address at its TLS port`,
        );
      }
      if (phase === 'handshake') {
        if (sessionKey) tls?.sessions?.delete(sessionKey);
        return fail('ERR_790', `the ingress closed the connection during the TLS handshake (${reason})`);
      }
      return fail('ERR_790', `the ingress connection failed before the reply (${reason})`);
    };
    const onEnd = () =>
      fail(
        'ERR_790',
        phase === 'handshake'
          ? 'the ingress closed the connection during the TLS handshake'
          : phase === 'connect'
            ? `the connection to the ingress at ${opts.address} closed before it was established`
            : 'the ingress closed the connection before replying',
      );
    const onAbort = () => fail('ERR_794', 'aborted by the caller');
    const timer = setTimeout(
      () => fail('ERR_791', `no reply from the ingress at ${opts.address} within ${timeoutMs} ms`),
      timeoutMs,
    );

    raw.once('connect', onTcpConnect);
    if (tls) socket.once('secureConnect', onReady);
    socket.on('data', onData);
    socket.on('error', onError);
    socket.on('end', onEnd);
    socket.on('close', onEnd);
    opts.signal?.addEventListener('abort', onAbort, { once: true });
  });
}
