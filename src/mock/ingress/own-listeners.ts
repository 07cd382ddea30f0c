/** The mock's HTTP listeners as the ingress's own-listener check sees them. */
import type { OwnListener } from './own-addresses.js';

/**
 * Own listeners from the public API URL, the admin URL and `public_base_url` (the public API as
 * clients outside reach it). URLs without a port use the scheme's default.
 */
export function ownListenersOf(
  publicUrl: string,
  adminUrl: string | undefined,
  publicBaseUrl: string | undefined,
): OwnListener[] {
  const out: OwnListener[] = [];
  const add = (label: string, url: string | undefined) => {
    if (!url) return;
    const u = new URL(url);
    const port = u.port ? Number(u.port) : u.protocol === 'https:' ? 443 : 80;
    out.push({ label, host: u.hostname.replace(/^\[(.*)\]$/, '$1'), port });
  };
  add('management API', publicUrl);
  add('admin interface', adminUrl);
  add('management API (public_base_url)', publicBaseUrl);
  return out;
}
