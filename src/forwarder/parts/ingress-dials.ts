import type { Upstream } from '../upstream.js';
import { TOKEN_CHECK_URL } from '../ingress-credentials.js';
import { IngressOpener, type OpenRequest } from '../ingress-opener.js';
import type { ForwarderBase } from './base.js';
import type { IngressTls } from './ingress-tls.js';

/**
 * Every stream the forwarder opens to the binding ingress, client connections and credential
 * checks alike: through one opener (v1 connections or v2 sessions) with the TLS options of the
 * moment, counted by protocol.
 */
export class IngressDials {
  private readonly opener: IngressOpener;

  constructor(
    private readonly base: ForwarderBase,
    private readonly tls: IngressTls,
  ) {
    const { config, log, metrics } = base;
    this.opener = new IngressOpener({
      protocol: config.ingress.protocol,
      sessions: config.ingress.sessions,
      windowBytes: config.ingress.streamWindowBytes,
      sharedWindowBytes: config.ingress.sharedWindowBytes,
      onProtocol: (address, protocol, why) =>
        log.info({ address, protocol, reason: why }, 'forwarder ingress protocol'),
    });
    metrics.tally.ingressSessions = () => this.opener.sessions;
  }

  async open(request: OpenRequest): Promise<Upstream> {
    const upstream = await this.opener.open(request, this.tls.current);
    this.base.metrics.tally.upstreams.add(upstream.protocol, () => ({ protocol: upstream.protocol }));
    return upstream;
  }

  /** One stream to TOKEN_CHECK_URL (answered without an upstream): undefined when it opened, else its error. */
  async check(token: string, address: string): Promise<unknown> {
    try {
      const upstream = await this.open({
        address,
        authtoken: token,
        url: TOKEN_CHECK_URL,
        source: undefined,
        timeoutMs: this.base.config.limits.dialTimeoutMs,
        signal: new AbortController().signal,
      });
      try {
        await upstream.confirmed;
      } finally {
        upstream.abort();
      }
      return undefined;
    } catch (err) {
      return err;
    }
  }

  /** Closes the v2 sessions (the stop order's `destroy ingress sessions`). */
  destroy(): void {
    this.opener.destroy();
  }
}
