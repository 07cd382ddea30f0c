/**
 * Pure: where the forwarder sends its connections (and with them the authtoken). Only two sources
 * are trusted: the forwarder's own config (`ingress.address`) and the install record, the
 * ConfigMap `<release>-install` that only the controller's service account may write. Never a
 * Service annotation: whoever may write Services in the operator namespace could otherwise point
 * a port at a server of their choosing and collect the authtoken.
 */
import { isOwnedBy, ROLE_LABEL, type InstallIdentity } from '../binding/identity.js';
import { installRecordName, parseInstallRecord } from '../binding/install-record.js';
import type { ConfigMap } from '../kube/objects.js';
import { isLoopbackHost, parseHostPort } from '../net/host-port.js';

export const INSTALL_RECORD_ROLE = 'install-record';

export interface IngressAddress {
  /** `host:port`, or undefined when none is usable. */
  address: string | undefined;
  source: 'config' | 'install-record' | 'none';
  /** The registration the address came from (install record only). */
  operatorId?: string;
  /** Why there is no address, for `/readyz` and the log; one line naming the object and the fix. */
  problem?: string;
}

export function resolveIngressAddress(
  override: string | undefined,
  record: ConfigMap | undefined,
  identity: InstallIdentity,
  opts: { plainTcp: boolean },
): IngressAddress {
  if (override !== undefined) return { address: override, source: 'config' };
  const name = installRecordName(identity);
  if (!record) {
    return {
      address: undefined,
      source: 'none',
      problem: `no binding ingress address: ConfigMap ${name} not found (the controller writes it once registered) and ingress.address is not set`,
    };
  }
  if (!isOwnedBy(record, identity) || record.metadata.labels?.[ROLE_LABEL] !== INSTALL_RECORD_ROLE) {
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
  return { address: ingressAddress, source: 'install-record', ...idPart };
}
