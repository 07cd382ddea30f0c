import { createHash } from 'node:crypto';

/**
 * Service names (docs/projection.md "Internal Service", "Alias Service"). Pure.
 */

const DNS_1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const MAX_NAME = 63;
const HASH_CHARS = 8;

/** True when `s` is a DNS-1035 label: lower-case a-z, 0-9 and "-", starting with a letter, ending alphanumeric, at most 63. */
export function isDns1035Label(s: string): boolean {
  return s.length <= MAX_NAME && DNS_1035_LABEL.test(s);
}

/**
 * The internal Service's name for an endpoint id. `ep_01jabc` → `ep-01jabc`. An id that still is
 * not a DNS-1035 label is lower-cased, every character other than a-z, 0-9 and "-" becomes "-",
 * leading characters up to the first letter and trailing "-" are dropped, the rest is cut to fit,
 * and `-<first 8 hex of SHA-256(exact id)>` is appended, so ids differing only in case or in
 * dropped characters get different names. Never throws; always a DNS-1035 label.
 */
export function internalServiceName(endpointId: string): string {
  const plain = endpointId.replaceAll('_', '-');
  if (isDns1035Label(plain)) return plain;
  const hash = createHash('sha256').update(endpointId, 'utf8').digest('hex').slice(0, HASH_CHARS);
  let base = plain
    .toLowerCase()
    .replace(/[^a-z0-9-]/g, '-')
    .replace(/^[^a-z]+/, '');
  base = base.slice(0, MAX_NAME - HASH_CHARS - 1).replace(/-+$/, '');
  // An id with no letter at all still needs a name that starts with one.
  if (base.length === 0) base = 'ep';
  return `${base}-${hash}`;
}

/** The DNS name an alias Service points at: the internal Service's cluster-local name. */
export function aliasExternalName(
  internalName: string,
  operatorNamespace: string,
  clusterDomain: string,
): string {
  return `${internalName}.${operatorNamespace}.svc.${clusterDomain}`;
}
