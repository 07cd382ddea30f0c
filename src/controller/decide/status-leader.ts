import type { ErrorKind } from '../../kube/errors.js';

/**
 * Who leads, and why this replica cannot, from what it observed. Pure: the controller passes
 * the elector's last observation and error, the namespace cache's answer and the wall clock.
 */

export interface LeaseObservation {
  holder: string;
  acquireTime: string | undefined;
  renewTime: string | undefined;
  leaseDurationSeconds: number;
}

export interface LeadershipInput {
  enabled: boolean;
  identity: string;
  leading: boolean;
  lease: LeaseObservation | undefined;
  /** The last failed Lease read/write, if the last attempt failed. */
  lastError: { errorKind: ErrorKind; code?: number; err: string } | undefined;
  namespace: string;
  leaseName: string;
  /** undefined: the namespace cache has not synced yet (no claim either way). */
  namespaceExists: boolean | undefined;
  nowMs: number;
}

export interface LeadershipView {
  /** The holder of the Lease as last observed (may be this replica); null when none. */
  holder: string | null;
  /** When the holder acquired the Lease (RFC 3339), when known. */
  since: string | null;
  /** Why this replica cannot lead now; empty when it leads or simply follows a live leader. */
  cannotLead: string[];
}

/** The leadership part of `/status` and `/readyz`. */
export function leadership(i: LeadershipInput): LeadershipView {
  if (!i.enabled) return { holder: i.identity, since: null, cannotLead: [] };
  const holder = i.lease?.holder || null;
  const since = holder ? (i.lease?.acquireTime ?? null) : null;
  const reasons: string[] = [];
  if (i.namespaceExists === false) {
    reasons.push(
      `operator namespace ${i.namespace} does not exist: create it (kubectl create namespace ${i.namespace}) or set operatorNamespace`,
    );
  } else if (i.lastError?.errorKind === 'auth') {
    reasons.push(
      `the Lease ${i.namespace}/${i.leaseName} may not be read or written (HTTP ${i.lastError.code ?? '403'}): grant get, update and create on leases.coordination.k8s.io in ${i.namespace}`,
    );
  } else if (i.lastError && !i.leading) {
    reasons.push(`the Lease ${i.namespace}/${i.leaseName} cannot be read or written: ${i.lastError.err}`);
  }
  if (!i.leading && holder && holder !== i.identity && i.lease) {
    const renewed = i.lease.renewTime ? Date.parse(i.lease.renewTime) : NaN;
    const ageMs = i.nowMs - renewed;
    if (!Number.isNaN(renewed) && ageMs > i.lease.leaseDurationSeconds * 1000 * 2) {
      reasons.push(
        `the Lease is held by ${holder}, not renewed for ${Math.round(ageMs / 1000)}s (duration ${i.lease.leaseDurationSeconds}s), and this replica could not take it over`,
      );
    }
  }
  return { holder, since, cannotLead: reasons };
}
