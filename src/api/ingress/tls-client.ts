/**
 * What a TLS client of the ingress keeps between connections: one SecureContext (parsing the CA
 * bundle and the system store per connection is a quarter of the handshake's CPU) and the latest
 * session per ingress, so a new connection resumes instead of running a full handshake.
 */
import { createSecureContext, type SecureContext } from 'node:tls';

/** The sessions a client may resume, by `host:port|servername`. */
export interface TlsSessionCache {
  get(key: string): Buffer | undefined;
  set(key: string, session: Buffer): void;
  /** Forgets a session the server refused or that failed (it would fail again). */
  delete(key: string): void;
}

/** Keeps the newest session of each of at most `max` ingresses. */
export class LatestSessionCache implements TlsSessionCache {
  private readonly sessions = new Map<string, Buffer>();

  constructor(private readonly max = 16) {}

  get(key: string): Buffer | undefined {
    return this.sessions.get(key);
  }

  set(key: string, session: Buffer): void {
    this.sessions.delete(key);
    this.sessions.set(key, session);
    if (this.sessions.size > this.max) this.sessions.delete(this.sessions.keys().next().value!);
  }

  delete(key: string): void {
    this.sessions.delete(key);
  }
}

export interface IngressTlsSettings {
  /** PEM of the CAs to trust; default: the system's. */
  ca?: string;
  /** SNI and the name checked against the certificate; default: the address's host. */
  servername?: string;
  /** Default true. */
  rejectUnauthorized?: boolean;
}

/** The dialer's TLS options with the reusable parts built once: pass the result to every dial. */
export function reusableTls(settings: IngressTlsSettings): IngressTlsSettings & {
  secureContext: SecureContext;
  sessions: TlsSessionCache;
} {
  return {
    ...settings,
    secureContext: createSecureContext(settings.ca ? { ca: settings.ca } : {}),
    sessions: new LatestSessionCache(),
  };
}
