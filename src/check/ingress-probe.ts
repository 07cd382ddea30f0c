import { Cancellation } from '../api/ingress/cancel.js';
import { IngressError, type IngressTlsOptions } from '../api/ingress/dialer.js';
import { speaksTls } from '../api/ingress/tls-probe.js';
import type { InstallIdentity } from '../binding/identity.js';
import { installRecordName } from '../binding/ownership/index.js';
import type { ForwarderConfig } from '../forwarder/config.js';
import { resolveIngressAddress } from '../forwarder/ingress-address.js';
import {
  ForwarderConfigError,
  ingressTlsFor,
  readAuthtoken,
  readIngressCa,
  TOKEN_CHECK_URL,
} from '../forwarder/ingress-credentials.js';
import { IngressOpener } from '../forwarder/ingress-opener.js';
import type { ConfigMap } from '../kube/objects.js';
import {
  endpointCheck,
  ingressCheck,
  type DialSeen,
  type EndpointTarget,
  type IngressSeen,
  type ProtocolSeen,
} from './ingress-decisions.js';
import type { CheckResult } from './result.js';

/**
 * The I/O of the ingress lines of `check`: read the forwarder's ingress settings and authtoken,
 * resolve the address as the forwarder does (ingress.address, else the install record), and dial
 * with the forwarder's opener, in the protocol it would choose (ingress.protocol: v2 when the
 * ingress offers h2 under `auto`). Nothing is sent after the ingress's reply; the connection (v1)
 * or stream (v2) is reset.
 */

export interface IngressCheckSettings {
  /** The forwarder's settings (ingress.*, authtokenFile) for this install, or why they are unusable. */
  forwarder: ForwarderConfig | { problem: string };
  /** ENDPOINT_BINDER_AUTHTOKEN, used when the settings name no authtokenFile (as the forwarder does). */
  authtokenFromEnv?: string | undefined;
  /** `--endpoint`: an endpoint id (`ep_...`) or URL to open one connection to. */
  endpoint?: string | undefined;
}

/** The install record as read from the cluster: the ConfigMap, absent, or why it could not be read. */
export type RecordRead = { record: ConfigMap | undefined } | { error: string } | { skip: string };

export interface IngressProbeDeps {
  readRecord(name: string): Promise<RecordRead>;
  /** Resolves an endpoint id to its URL (management API), or says why it cannot. */
  endpointUrl(id: string): Promise<{ url: string } | { problem: string }>;
  timeoutMs: number;
}

/** Dials through the forwarder's opener: under `auto`, v2 unless the ingress offered no h2. */
class CheckDialer {
  private readonly opener: IngressOpener;

  constructor(
    private readonly cfg: ForwarderConfig,
    private readonly address: string,
    private readonly authtoken: string,
    private readonly tls: IngressTlsOptions | undefined,
    private readonly timeoutMs: number,
  ) {
    // One session is enough for the one or two streams check opens.
    this.opener = new IngressOpener({
      protocol: cfg.ingress.protocol,
      sessions: 1,
      windowBytes: cfg.ingress.streamWindowBytes,
      sharedWindowBytes: cfg.ingress.sharedWindowBytes,
    });
  }

  /** The protocol asked for and the one the last dial spoke (a fallback to v1 is remembered). */
  get protocol(): ProtocolSeen {
    return { setting: this.cfg.ingress.protocol, used: this.opener.protocolFor(this.address) };
  }

  async dial(url: string): Promise<DialSeen> {
    const seen = await this.attempt(url);
    // A plain client is closed without a reply by a TLS ingress (v1), or finds no h2c (v2): say so.
    if (
      !seen.ok &&
      !this.tls &&
      ['ERR_790', 'ERR_797'].includes(seen.code) &&
      (await speaksTls(this.address))
    )
      return {
        ok: false,
        code: 'ERR_796',
        msg: `the ingress at ${this.address} speaks TLS and ingress.tls is false`,
      };
    return seen;
  }

  close(): void {
    this.opener.destroy();
  }

  private async attempt(url: string): Promise<DialSeen> {
    try {
      const request = {
        address: this.address,
        authtoken: this.authtoken,
        url,
        source: undefined,
        timeoutMs: this.timeoutMs,
        signal: new Cancellation(),
      };
      const upstream = await this.opener.open(request, this.tls);
      try {
        await upstream.confirmed;
      } finally {
        // Nothing was sent: an abort is what a client that gives up does.
        upstream.abort();
      }
      return { ok: true };
    } catch (err) {
      if (err instanceof IngressError) return { ok: false, code: err.code, msg: err.msg };
      return { ok: false, code: 'ERR_793', msg: err instanceof Error ? err.message : String(err) };
    }
  }
}

const NO_AUTHTOKEN =
  'no authtoken: set ENDPOINT_BINDER_AUTHTOKEN, --authtoken-file, or --forwarder-config with authtokenFile (the Secret key AUTHTOKEN)';

/** The ingress line, and the `--endpoint` line when one was asked for. */
export async function ingressChecks(
  settings: IngressCheckSettings,
  deps: IngressProbeDeps,
): Promise<CheckResult[]> {
  const requested = settings.endpoint;
  const finish = async (
    line: CheckResult,
    endpointLine?: () => Promise<CheckResult>,
  ): Promise<CheckResult[]> => {
    if (requested === undefined) return [line];
    if (line.status !== 'ok' || !endpointLine)
      return [
        line,
        endpointCheck(requested, { kind: 'skip', because: 'the binding ingress line did not pass' }),
      ];
    return [line, await endpointLine()];
  };
  const only = (seen: IngressSeen) => finish(ingressCheck(seen));

  const cfg = settings.forwarder;
  if ('problem' in cfg) return only({ kind: 'problem', problem: cfg.problem });
  let tls: IngressTlsOptions | undefined;
  let authtoken: string;
  try {
    tls = ingressTlsFor(cfg, await readIngressCa(cfg));
    if (!cfg.authtokenFile && settings.authtokenFromEnv === undefined)
      return only({ kind: 'skip', because: NO_AUTHTOKEN });
    authtoken = await readAuthtoken(cfg, settings.authtokenFromEnv);
  } catch (err) {
    if (err instanceof ForwarderConfigError) return only({ kind: 'problem', problem: err.message });
    throw err;
  }

  const identity: InstallIdentity = { release: cfg.releaseName, operatorNamespace: cfg.operatorNamespace };
  let record: ConfigMap | undefined;
  if (cfg.ingress.address === undefined) {
    const name = installRecordName(identity);
    const read = await deps.readRecord(name);
    if ('skip' in read) return only({ kind: 'skip', because: read.skip });
    if ('error' in read)
      return only({
        kind: 'problem',
        problem: `cannot read the install record ConfigMap ${cfg.operatorNamespace}/${name}: ${read.error}; or set ingress.address (--ingress-address)`,
      });
    record = read.record;
  }
  const resolved = resolveIngressAddress(cfg.ingress.address, record, identity, {
    plainTcp: !cfg.ingress.tls,
  });
  if (resolved.address === undefined || resolved.source === 'none')
    return only({ kind: 'problem', problem: resolved.problem ?? 'no binding ingress address' });
  const address = resolved.address;
  const target = { address, source: resolved.source, tls: tls !== undefined };
  const dialer = new CheckDialer(cfg, address, authtoken, tls, deps.timeoutMs);
  try {
    const seen = await dialer.dial(TOKEN_CHECK_URL);
    const protocol = dialer.protocol;
    return await finish(ingressCheck({ kind: 'dialled', target, seen, protocol }), () =>
      endpointLine(requested!, dialer, deps),
    );
  } finally {
    dialer.close();
  }
}

/** The `--endpoint` line: resolve the id, then one dial for its URL over the same opener. */
async function endpointLine(req: string, dialer: CheckDialer, deps: IngressProbeDeps): Promise<CheckResult> {
  let endpoint: EndpointTarget;
  if (req.includes('://')) endpoint = { url: req };
  else {
    const found = await deps.endpointUrl(req);
    if ('problem' in found) return endpointCheck(req, { kind: 'unknown', problem: found.problem });
    endpoint = { id: req, url: found.url };
  }
  const answer = await dialer.dial(endpoint.url);
  return endpointCheck(req, { kind: 'dialled', endpoint, seen: answer });
}
