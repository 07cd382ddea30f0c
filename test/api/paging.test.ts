import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiListingError, ManagementClient, collect } from '../../src/api/client/index.js';
import { ACME_KEY } from '../helpers/mock-api.js';

/**
 * A scripted API for one list operation: `answer` gets the request's `before_id` (undefined on
 * the first page) and returns the ids of the page and whether it names a next page.
 */
interface Script {
  answer(beforeId: string | undefined, limit: number): { ids: string[]; next: boolean };
}

const endpoint = (id: string) => ({
  id,
  region: 'us',
  created_at: '2026-01-01T00:00:00Z',
  updated_at: '2026-01-01T00:00:00Z',
  public_url: 'http://x.prod',
  proto: 'http',
  host: 'x.prod',
  port: 80,
  hostport: 'x.prod:80',
  type: 'cloud',
  pooling_enabled: false,
  metadata: '',
  description: '',
  url: 'http://x.prod',
  bindings: ['kubernetes'],
  uri: `x/${id}`,
});

let server: Server | undefined;
let client: ManagementClient | undefined;
afterEach(async () => {
  await client?.close();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  server = undefined;
  client = undefined;
});

async function serve(script: Script): Promise<{ client: ManagementClient; seen: string[] }> {
  const seen: string[] = [];
  let base = '';
  server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', base);
    seen.push(url.search);
    const limit = Number(url.searchParams.get('limit') ?? '100');
    const { ids, next } = script.answer(url.searchParams.get('before_id') ?? undefined, limit);
    const last = ids[ids.length - 1] ?? 'ep_z';
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        endpoints: ids.map(endpoint),
        uri: `${base}${url.pathname}`,
        next_page_uri: next ? `${base}${url.pathname}?limit=${limit}&before_id=${last}` : null,
      }),
    );
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  client = new ManagementClient({ baseUrl: base, apiKey: ACME_KEY, retry: { retries: 0 } });
  return { client, seen };
}

/** ids ep_099 … ep_000, newest (largest) first, paged faithfully. */
const ALL = Array.from({ length: 100 }, (_, i) => `ep_${String(99 - i).padStart(3, '0')}`);
function faithful(beforeId: string | undefined, limit: number): { ids: string[]; next: boolean } {
  const rest = beforeId === undefined ? ALL : ALL.filter((id) => id < beforeId);
  return { ids: rest.slice(0, limit), next: rest.length > limit };
}

describe('paging: a listing is complete only when it provably is', () => {
  it('an empty page that names a next page is an error, not the end', async () => {
    const { client } = await serve({
      answer: (before, limit) => (before === undefined ? faithful(before, limit) : { ids: [], next: true }),
    });
    const err = await collect(client.kubernetesOperators.boundEndpoints('k8sop_1', { limit: 10 })).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ApiListingError);
    expect((err as Error).message).toContain('empty page');
  });

  it('a full first page claiming to be the last is checked, and the rest is read', async () => {
    // Truncated: the first page says there is nothing after it; there is.
    const { client, seen } = await serve({
      answer: (before, limit) => {
        const page = faithful(before, limit);
        return before === undefined ? { ids: page.ids, next: false } : page;
      },
    });
    const got = await collect(client.kubernetesOperators.boundEndpoints('k8sop_1', { limit: 10 }));
    expect(got.map((e) => e.id)).toEqual(ALL);
    expect(seen[1]).toContain('before_id=ep_090');
  });

  it('a full last page is proven by an empty page after it; a short one needs no proof', async () => {
    const full = await serve({ answer: faithful });
    expect(
      await collect(full.client.kubernetesOperators.boundEndpoints('k8sop_1', { limit: 50 })),
    ).toHaveLength(100);
    // 50 + 50, then the proof: one more request, answered empty.
    expect(full.seen).toHaveLength(3);
    await client?.close();
    await new Promise<void>((r) => server!.close(() => r()));

    const short = await serve({ answer: faithful });
    expect(
      await collect(short.client.kubernetesOperators.boundEndpoints('k8sop_1', { limit: 30 })),
    ).toHaveLength(100);
    expect(short.seen).toHaveLength(4); // 30 + 30 + 30 + 10: the short page ends it
  });

  it('other listings keep their plain end (no proof request)', async () => {
    const { client, seen } = await serve({ answer: faithful });
    // `endpoints.list` is not proven: a full last page ends it.
    const got = await collect(client.endpoints.list({ limit: 100 }));
    expect(got).toHaveLength(100);
    expect(seen).toHaveLength(1);
  });
});
