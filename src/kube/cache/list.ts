import type { z } from 'zod';
import { isGone } from '../errors.js';
import { ListSchema, type KubeObject } from '../objects.js';
import type { KubeTransport } from '../transport.js';

export interface ListOptions<T extends KubeObject> {
  transport: KubeTransport;
  path: string;
  schema: z.ZodType<T>;
  labelSelector?: string | undefined;
  fieldSelector?: string | undefined;
  /** Page size (`limit`); 500 like client-go. */
  pageSize?: number;
  signal?: AbortSignal;
  /** Called for each item that fails the schema; the item is skipped. */
  onInvalid?: (raw: unknown, error: z.ZodError) => void;
}

export interface ListResult<T> {
  items: T[];
  /** The collection's resourceVersion: where a watch resumes. */
  resourceVersion: string;
  pages: number;
}

/**
 * A full, consistent listing, paged with `limit`/`continue`. If a continue token expires
 * (410 mid-way), the listing restarts once without paging, as client-go's pager does.
 */
export async function listAll<T extends KubeObject>(opts: ListOptions<T>): Promise<ListResult<T>> {
  try {
    return await listPaged(opts, opts.pageSize ?? 500);
  } catch (err) {
    if (isGone(err) && (err as { midway?: boolean }).midway) return listPaged(opts, undefined);
    throw err;
  }
}

async function listPaged<T extends KubeObject>(
  opts: ListOptions<T>,
  pageSize: number | undefined,
): Promise<ListResult<T>> {
  const items: T[] = [];
  let cont: string | undefined;
  let rv = '';
  let pages = 0;
  do {
    let page: z.infer<typeof ListSchema>;
    try {
      page = await opts.transport.json(
        {
          path: opts.path,
          query: {
            labelSelector: opts.labelSelector,
            fieldSelector: opts.fieldSelector,
            limit: pageSize,
            continue: cont,
          },
          ...(opts.signal ? { signal: opts.signal } : {}),
        },
        ListSchema,
      );
    } catch (err) {
      if (cont !== undefined && err instanceof Error) Object.assign(err, { midway: true });
      throw err;
    }
    pages++;
    for (const raw of page.items ?? []) {
      const parsed = opts.schema.safeParse(raw);
      if (parsed.success) items.push(parsed.data);
      else opts.onInvalid?.(raw, parsed.error);
    }
    rv = page.metadata?.resourceVersion ?? rv;
    cont = page.metadata?.continue || undefined;
  } while (cont !== undefined && pageSize !== undefined);
  return { items, resourceVersion: rv, pages };
}
