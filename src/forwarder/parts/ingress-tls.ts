import type { IngressTlsOptions } from '../../api/ingress/dialer.js';
import type { Logger } from '../../log/logger.js';
import type { ForwarderConfig } from '../config.js';
import { ingressTlsFor } from '../ingress-credentials.js';

/**
 * The TLS options every new ingress dial uses: built from the CA bundle read at start, replaced
 * when the CA file changes to a bundle that parses (a bad one keeps the previous options).
 */
export class IngressTls {
  private options: IngressTlsOptions | undefined;

  constructor(
    private readonly config: ForwarderConfig,
    ca: string | undefined,
    private readonly log: Logger,
  ) {
    this.options = ingressTlsFor(config, ca);
  }

  /** The options for the next dial; undefined for plain TCP (`ingress.tls: false`). */
  get current(): IngressTlsOptions | undefined {
    return this.options;
  }

  /** Takes the CA bundle `content` read from `file`, or logs why it keeps the previous one. */
  reload(file: string, content: string): void {
    const { log } = this;
    if (!content.includes('-----BEGIN CERTIFICATE-----')) {
      log.error({ file }, 'forwarder CA bundle holds no PEM certificate, keeping the previous one');
      return;
    }
    try {
      this.options = ingressTlsFor(this.config, content);
      log.info({ file }, 'forwarder CA bundle reloaded');
    } catch (err) {
      log.error(
        { file, error: err instanceof Error ? err.message : String(err) },
        'forwarder CA bundle invalid',
      );
    }
  }
}
