import { z } from 'zod';
import type { CallOptions, Transport } from './transport.js';
import type { PageOptions } from '../schemas/common.js';

/**
 * Lazily walks a list operation page by page: the first request goes out on the first `next()`,
 * and each following page is fetched from `next_page_uri` exactly as the server gave it.
 * Stops on a null `next_page_uri` or an empty page.
 */
export async function* pages<T extends z.ZodType>(
  transport: Transport,
  path: string,
  key: string,
  item: T,
  opts: PageOptions & CallOptions & { query?: Record<string, string | undefined> } = {},
): AsyncGenerator<z.infer<T>[], void, undefined> {
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
    if (items.length === 0) return;
    yield items;
    next = page['next_page_uri'] as string | null;
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
