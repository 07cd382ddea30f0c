import { MockError } from './errors.js';

export const PAGING_PARAMS = ['limit', 'before_id'] as const;

/** Parses the query string strictly: every parameter known to the operation, none repeated. */
export function parseQuery(search: URLSearchParams, allowed: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const [key, value] of search) {
    if (!allowed.includes(key)) {
      const supported = allowed.length ? `supported: ${allowed.join(', ')}` : 'this operation takes none';
      throw new MockError('ERR_130', `unknown query parameter "${key}" (${supported})`, { parameter: key });
    }
    if (out.has(key)) {
      throw new MockError('ERR_131', `query parameter "${key}" is given more than once`, { parameter: key });
    }
    out.set(key, value);
  }
  return out;
}
