/** Name resolution and the machine's own addresses, for the own-listener check. */
import type { LookupAddress } from 'node:dns';
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import { normaliseIp, type OwnListener, type ResolvedListener } from './own-addresses.js';

/** Every address of `host` in resolver order; an IP literal is its own single address. */
export async function resolveHost(host: string): Promise<LookupAddress[]> {
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  const family = isIP(bare);
  if (family !== 0) return [{ address: bare, family }];
  return lookup(bare, { all: true, order: 'verbatim' });
}

/**
 * The own listeners with every host resolved. A name that does not resolve is left out: nothing
 * can reach a listener through it.
 */
export async function resolveListeners(listeners: readonly OwnListener[]): Promise<ResolvedListener[]> {
  const resolved = await Promise.all(
    listeners.map(async (l) => {
      try {
        const addrs = await resolveHost(l.host);
        return addrs.map((a) => ({ label: l.label, ip: normaliseIp(a.address), port: l.port }));
      } catch {
        return [];
      }
    }),
  );
  return resolved.flat();
}

/** The addresses of this machine's network interfaces, normalised (loopback included). */
export function localIps(): Set<string> {
  const ips = new Set<string>();
  for (const list of Object.values(networkInterfaces())) {
    for (const i of list ?? []) ips.add(normaliseIp(i.address));
  }
  return ips;
}
