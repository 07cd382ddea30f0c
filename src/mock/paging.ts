import type { IdPrefix } from '../api/ids.js';
import { hasIdPrefix } from '../api/ids.js';
import type { RequestContext } from './http/context.js';
import { MockError } from './http/errors.js';
import type { Reply } from './http/router.js';

export const MAX_PAGE_SIZE = 100;

export interface Page<T> {
  items: T[];
  /** Absolute URL of the next page, or null on the last page. */
  nextPageUri: string | null;
}

export function parseLimit(raw: string | undefined): number {
  if (raw === undefined) return MAX_PAGE_SIZE;
  if (!/^\d{1,3}$/.test(raw) || Number(raw) < 1 || Number(raw) > MAX_PAGE_SIZE) {
    throw new MockError('ERR_132', `limit must be a whole number from 1 to ${MAX_PAGE_SIZE}, got "${raw}"`, {
      parameter: 'limit',
    });
  }
  return Number(raw);
}

/**
 * Cuts one page out of a newest-first list. `before_id` is an exclusive upper bound, so a page
 * is stable even when newer items are created meanwhile. `next_page_uri` carries the caller's
 * other query parameters and is absolute, built from the request's own base URL.
 */
export function paginate<T extends { id: string }>(
  newestFirst: T[],
  query: ReadonlyMap<string, string>,
  opts: { baseUrl: string; path: string; prefix: IdPrefix },
): Page<T> {
  const limit = parseLimit(query.get('limit'));
  const beforeId = query.get('before_id');
  if (beforeId !== undefined && !hasIdPrefix(beforeId, opts.prefix)) {
    throw new MockError('ERR_133', `before_id "${beforeId}" is not an id starting with "${opts.prefix}"`, {
      parameter: 'before_id',
    });
  }
  const start = beforeId === undefined ? newestFirst : newestFirst.filter((item) => item.id < beforeId);
  const items = start.slice(0, limit);
  const last = items[items.length - 1];
  if (!last || start.length <= limit) return { items, nextPageUri: null };
  const next = new URLSearchParams();
  for (const [k, v] of query) if (k !== 'before_id' && k !== 'limit') next.set(k, v);
  next.set('limit', String(limit));
  next.set('before_id', last.id);
  return { items, nextPageUri: `${opts.baseUrl}${opts.path}?${next.toString()}` };
}

/** The reply of every list operation: one page under the resource's list key, `uri` and `next_page_uri`. */
export function listReply<T extends { id: string }>(
  ctx: Pick<RequestContext, 'query' | 'baseUrl'>,
  spec: { key: string; path: string; prefix: IdPrefix; newestFirst: T[]; render: (item: T) => unknown },
): Reply {
  const page = paginate(spec.newestFirst, ctx.query, {
    baseUrl: ctx.baseUrl,
    path: spec.path,
    prefix: spec.prefix,
  });
  return {
    status: 200,
    body: {
      [spec.key]: page.items.map(spec.render),
      uri: `${ctx.baseUrl}${spec.path}`,
      next_page_uri: page.nextPageUri,
    },
  };
}
