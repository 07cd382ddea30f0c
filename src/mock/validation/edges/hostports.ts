import { fieldError } from './field-error.js';
import { isDnsHost } from './dns.js';

/**
 * Checks `host:port` entries and returns them normalized (host lower-cased, port without leading
 * zeros). Hosts are DNS names (no IP literals, no wildcards); ports are 1–65535.
 */
export function validateHostports(hostports: readonly string[], field: string): string[] {
  const seen = new Set<string>();
  return hostports.map((raw, i) => {
    const at = `${field}[${i}]`;
    const colon = raw.lastIndexOf(':');
    if (colon < 0) throw fieldError('ERR_301', at, `"${raw}" must have the form "<host>:<port>"`);
    const host = raw.slice(0, colon);
    const port = raw.slice(colon + 1);
    if (!isDnsHost(host))
      throw fieldError('ERR_301', at, `"${host}" in "${raw}" is not a valid DNS host name`);
    if (!/^\d{1,5}$/.test(port) || Number(port) < 1 || Number(port) > 65535) {
      throw fieldError('ERR_302', at, `port "${port}" in "${raw}" must be a whole number from 1 to 65535`);
    }
    const normalized = `${host.toLowerCase()}:${Number(port)}`;
    if (seen.has(normalized)) throw fieldError('ERR_304', at, `"${raw}" is listed more than once`);
    seen.add(normalized);
    return normalized;
  });
}
