import { z } from 'zod';
import type { CallOptions, Transport } from './transport.js';
import type { PageOptions } from '../schemas/common.js';

/**
 * A page sequence that cannot be the whole list: an empty page that still names a next page, or
 * (proving the end) a page past a claimed end that is not empty. Nothing read so far may be
 * taken as complete.
 */
export class ApiListingError extends Error {
  override name = 'ApiListingError';
}

export interface ListingOptions {
  /**
   * Only a provable end ends the listing: a full page (`limit` items) with a null
   * `next_page_uri` is checked by asking for the page after its last item, which must be empty
   * with no next link; a page with items there continues the listing. Needs `limit`.
   */
  proveEnd?: boolean;
}

/**
 * Lazily walks a list operation page by page: the first request goes out on the first `next()`,
 * and each following page is fetched from `next_page_uri` exactly as the server gave it.
 * Stops on a null `next_page_uri`; an empty page that names a next page is an error (a listing
 * that stopped there would look complete while it is not).
 */
export async function* pages<T extends z.ZodType>(
  transport: Transport,
  path: string,
  key: string,
  item: T,
  opts: PageOptions & CallOptions & ListingOptions & { query?: Record<string, string | undefined> } = {},
): AsyncGenerator<z.infer<T>[], void, undefined> {
  const limit = opts.limit;
  if (opts.proveEnd && limit === undefined) throw new Error('proveEnd needs a page limit');
  const schema = z.object({ next_page_uri: z.string().nullable() }).extend({ [key]: z.array(item) });
  const call = {
    ...(opts.signal ? { signal: opts.signal } : {}),
    ...(opts.timeoutMs ? { timeoutMs: opts.timeoutMs } : {}),
  };
  let next: string | null = transport.url(path, {
    ...opts.query,
    limit: opts.limit,
    before_id: opts.beforeId,
  });
  while (next !== null) {
    const page: Record<string, unknown> = await transport.call({
      method: 'GET',
      path: next,
      schema,
      ...call,
    });
    const items = (page[key] ?? []) as z.infer<T>[];
    const claimed = page['next_page_uri'] as string | null;
    if (items.length === 0) {
      if (claimed !== null) {
        throw new ApiListingError(
          `the API answered an empty page of ${key} that names a next page; the listing is incomplete`,
        );
      }
      return;
    }
    yield items;
    next = claimed;
    if (next === null && opts.proveEnd && limit !== undefined && items.length >= limit) {
      // A full last page may be a truncated listing: the page after its last item settles it.
      const last = items[items.length - 1] as { id?: unknown };
      if (typeof last.id !== 'string')
        throw new ApiListingError(`a page of ${key} has an item without an id`);
      next = transport.url(path, { ...opts.query, limit, before_id: last.id });
    }
  }
}

/** The items of every page, one at a time. */
export async function* items<T extends z.ZodType>(
  ...args: Parameters<typeof pages<T>>
): AsyncGenerator<z.infer<T>, void, undefined> {
  for await (const page of pages(...args)) yield* page;
}

/** Collects a lazy listing into an array (for small lists and tests). */
export async function collect<T>(iter: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of iter) out.push(x);
  return out;
}
