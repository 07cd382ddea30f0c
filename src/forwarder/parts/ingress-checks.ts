import { IngressError } from '../../api/ingress/dialer.js';
import { speaksTls } from '../../api/ingress/tls-probe.js';
import { AuthtokenState, type TokenVerdict } from '../authtoken.js';
import type { ForwarderConfig } from '../config.js';
import { TransportCheck, type TransportVerdict } from '../transport-check.js';
import type { ForwarderBase } from './base.js';
import type { IngressDestination } from './ingress-destination.js';
import type { IngressDials } from './ingress-dials.js';

/** What one dial's outcome says about the transport (TLS or plain) and the certificate. */
async function transportVerdict(
  config: ForwarderConfig,
  err: unknown,
  address: string,
): Promise<TransportVerdict> {
  if (err === undefined) return { ok: true };
  if (!(err instanceof IngressError)) return undefined;
  if (err.fromIngress) return { ok: true };
  if (err.code === 'ERR_796' || err.code === 'ERR_795')
    return { ok: false, problem: `${err.code}: ${err.msg}` };
  if (err.code === 'ERR_797' && config.ingress.tls)
    return {
      ok: false,
      problem: `ERR_797: ${err.msg}; ingress.protocol is v2, set it to auto or v1 (the chart's forwarder.ingressProtocol)`,
    };
  if ((err.code === 'ERR_790' || err.code === 'ERR_797') && !config.ingress.tls && (await speaksTls(address)))
    return {
      ok: false,
      problem: `ERR_796: the ingress at ${address} speaks TLS and closes plain connections without a reply, and ingress.tls is false; set ingress.tls to true (the chart's bindings.ingress.tls)`,
    };
  return undefined;
}

/**
 * What the ingress said about the forwarder's credentials and transport: whether the authtoken
 * is refused (ERR_710) and whether the ingress can be spoken to as configured (TLS or plain, the
 * certificate, the protocol). Every client dial's outcome is judged here; a doubt is checked with
 * a dial of its own. A change is logged and told through `onChange` (readiness may have changed).
 */
export class IngressChecks {
  readonly authtoken: AuthtokenState;
  readonly transport: TransportCheck;

  constructor(
    private readonly base: ForwarderBase,
    parts: {
      initialToken: string;
      destination: IngressDestination;
      dials: IngressDials;
      onChange: () => void;
    },
  ) {
    const { config, log } = base;
    const { destination, dials, onChange } = parts;
    this.authtoken = new AuthtokenState(
      parts.initialToken,
      async (token): Promise<TokenVerdict | undefined> => {
        const address = destination.current.address;
        if (!address) return undefined;
        const err = await dials.check(token, address);
        if (err === undefined) return 'accepted';
        if (!(err instanceof IngressError) || !err.fromIngress) return undefined;
        return err.code === 'ERR_710' ? 'refused' : 'accepted';
      },
      () => {
        const problem = this.authtoken.problem;
        if (problem) log.error({ problem }, 'forwarder authtoken refused');
        else log.info({}, 'forwarder authtoken accepted again');
        onChange();
      },
    );
    this.transport = new TransportCheck(
      async () => {
        const address = destination.current.address;
        return address
          ? transportVerdict(config, await dials.check(this.authtoken.token, address), address)
          : undefined;
      },
      () => {
        const problem = this.transport.problem;
        if (problem) log.error({ problem }, 'forwarder cannot speak to the ingress as configured');
        else log.info({}, 'forwarder speaks to the ingress as configured again');
        onChange();
      },
    );
  }

  /** A dial with `token` reached the ingress and was accepted. */
  judgeOk(token: string): void {
    this.authtoken.observe(token, 'accepted');
    this.transport.observe({ ok: true });
  }

  /** A dial with `token` to `address` failed with `err`. */
  judgeFailure(token: string, address: string, err: unknown): void {
    const { config } = this.base;
    if (err instanceof IngressError && err.fromIngress)
      this.authtoken.observe(token, err.code === 'ERR_710' ? 'refused' : 'accepted', err.msg);
    if (err instanceof IngressError) {
      if (
        err.fromIngress ||
        ['ERR_795', 'ERR_796'].includes(err.code) ||
        (err.code === 'ERR_797' && config.ingress.tls)
      )
        void transportVerdict(config, err, address).then((v) => this.transport.observe(v));
      // A plain client closed without a reply: a TLS ingress does that. Asked once at a time.
      else if ((err.code === 'ERR_790' || err.code === 'ERR_797') && !config.ingress.tls)
        this.transport.suspect();
    }
  }
}
