/**
 * Pure: where the forwarder sends its connections (and with them the authtoken). Only two sources
 * are trusted: the forwarder's own config (`ingress.address`) and the install record, the
 * ConfigMap `<release>-install` that the controller writes. Never a Service annotation: whoever
 * may write Services in the operator namespace could otherwise point a port at a server of their
 * choosing and collect the authtoken.
 *
 * The record is not trusted to *move* the ingress, though: whoever may update ConfigMaps in the
 * operator namespace could rewrite it. So the ingress's identity is pinned: by `ingress.address`
 * (a record naming another destination is refused), by `ingress.serverName` (every TLS dial
 * verifies that name, wherever the record points), or else by the first record this process read
 * (its host is kept: a record naming another host is refused; a new port on the same host is
 * followed, and TLS verifies the host's name on every dial).
 */
import {
  INSTALL_RECORD_ROLE,
  installRecordName,
  isInstallRecordOf,
  parseInstallRecord,
  ROLE_LABEL,
  type InstallIdentity,
} from '../binding/ownership/index.js';
import type { ConfigMap } from '../kube/objects.js';
import { isLoopbackHost, parseHostPort } from '../net/host-port.js';

export interface IngressAddress {
  /** `host:port`, or undefined when none is usable. */
  address: string | undefined;
  source: 'config' | 'install-record' | 'none';
  /** The registration the address came from (install record only). */
  operatorId?: string;
  /** Why there is no address, for `/readyz` and the log; one line naming the object and the fix. */
  problem?: string;
  /** The install record names a destination other than the pinned one: its address, refused. */
  refused?: string;
  /** Why it was refused: one line naming the pin and the fix. */
  refusal?: string;
}

/** What the ingress's identity is pinned to (see above). */
export interface IngressPin {
  /** The host of the first record's address this process accepted (when nothing is configured). */
  learnedHost?: string;
}

function sameHost(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase();
}

function sameAddress(a: string, b: string): boolean {
  const x = parseHostPort(a);
  const y = parseHostPort(b);
  return sameHost(x.host, y.host) && x.port === y.port;
}

export function resolveIngressAddress(
  override: string | undefined,
  record: ConfigMap | undefined,
  identity: InstallIdentity,
  opts: { plainTcp: boolean; pin?: IngressPin },
): IngressAddress {
  const name = installRecordName(identity);
  if (override !== undefined) {
    const named = recordAddress(record, identity);
    if (named === undefined || sameAddress(named, override)) return { address: override, source: 'config' };
    return {
      address: override,
      source: 'config',
      refused: named,
      refusal: `ConfigMap ${name} names the binding ingress ${named}, but ingress.address pins ${override}; the record is refused and the authtoken goes only to ${override} (if the ingress really moved, change ingress.address: the chart's bindings.ingress.address)`,
    };
  }
  if (!record) {
    return {
      address: undefined,
      source: 'none',
      problem: `no binding ingress address: ConfigMap ${name} not found (the controller writes it once registered) and ingress.address is not set`,
    };
  }
  if (!isInstallRecordOf(record, identity)) {
    return {
      address: undefined,
      source: 'none',
      problem: `ConfigMap ${name} lacks this install's labels (${ROLE_LABEL}=${INSTALL_RECORD_ROLE} and the ownership labels); not written by the controller, ignored`,
    };
  }
  const parsed = parseInstallRecord(record);
  if (!parsed.ok) return { address: undefined, source: 'none', problem: parsed.message };
  const { ingressAddress, operatorId } = parsed.record;
  const idPart = operatorId !== undefined ? { operatorId } : {};
  if (ingressAddress === undefined) {
    return {
      address: undefined,
      source: 'none',
      ...idPart,
      problem: `ConfigMap ${name} has no ingress-address (the registration names no binding ingress)`,
    };
  }
  if (opts.plainTcp && !isLoopbackHost(parseHostPort(ingressAddress).host)) {
    return {
      address: undefined,
      source: 'none',
      ...idPart,
      problem: `ConfigMap ${name} ingress-address ${ingressAddress} is not a loopback address, and ingress.tls is false (plain TCP only to a loopback ingress)`,
    };
  }
  const learned = opts.pin?.learnedHost;
  if (learned !== undefined && !sameHost(parseHostPort(ingressAddress).host, learned)) {
    return {
      address: undefined,
      source: 'none',
      ...idPart,
      refused: ingressAddress,
      refusal: `ConfigMap ${name} now names the binding ingress ${ingressAddress}, another host than ${learned} which this forwarder started with; refused, the authtoken is not sent there (pin the ingress with ingress.address or ingress.serverName: the chart's bindings.ingress.*; a restart accepts the record as it is then)`,
    };
  }
  return { address: ingressAddress, source: 'install-record', ...idPart };
}

/** The address an owned, well-formed install record names, if any (to compare with a pin). */
function recordAddress(record: ConfigMap | undefined, identity: InstallIdentity): string | undefined {
  if (!record || !isInstallRecordOf(record, identity)) return undefined;
  const parsed = parseInstallRecord(record);
  return parsed.ok ? parsed.record.ingressAddress : undefined;
}
