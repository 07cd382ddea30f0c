import { isDnsHost } from './dns.js';
import { fieldError } from './field-error.js';

/** A URL path: starts with "/", no white space, no query or fragment. */
const PATH = /^\/[^\s?#]*$/;

/** `match` is a path (`/x`), a host (`example.com`) or a host plus path (`example.com/x`). */
export function validateMatch(match: string, field: string): void {
  const rule = 'must be a path ("/x"), a host ("example.com") or a host plus path ("example.com/x")';
  if (match.startsWith('/')) {
    if (!PATH.test(match)) throw fieldError('ERR_332', field, `"${match}" ${rule}`);
    return;
  }
  const slash = match.indexOf('/');
  const host = slash < 0 ? match : match.slice(0, slash);
  const path = slash < 0 ? undefined : match.slice(slash);
  if (!isDnsHost(host) || (path !== undefined && !PATH.test(path))) {
    throw fieldError('ERR_332', field, `"${match}" ${rule}`);
  }
}
