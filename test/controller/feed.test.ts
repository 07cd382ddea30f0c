import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { ManagementClient } from '../../src/api/client/index.js';
import { EndpointFeed } from '../../src/controller/feed.js';
import { controllerMetrics } from '../../src/controller/metrics.js';
import { silentLogger } from '../../src/log/logger.js';
import { waitFor } from '../kube/helpers.js';
import { ManualClock } from '../helpers/manual-clock.js';

const ts = '2026-11-24T00:00:00Z';
const ep = (i: number) => ({
  id: `ep_${String(i).padStart(26, '0')}`,
  uri: `http://x/endpoints/ep_${i}`,
  url: `http://svc-${i}.prod:80`,
  proto: 'http',
  host: `svc-${i}.prod`,
  port: 80,
  hostport: `svc-${i}.prod:80`,
  public_url: `http://svc-${i}.prod:80`,
  bindings: ['kubernetes'],
  type: 'cloud',
  created_at: ts,
  updated_at: ts,
  pooling_enabled: false,
});

/**
 * A management API that answers the bound_endpoints listing page by page as told: the real
 * service can fail between pages, which the mock's fault injection cannot aim at.
 */
async function pagedApi(
  pages: () => ('ok' | 500)[],
  endpoints: () => number,
  events?: (res: ServerResponse) => void,
  /** `GET /endpoints/{id}`: the endpoint (by its number), or the API's not-found. */
  lookup?: (id: string) => number | undefined,
): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const single = /^\/endpoints\/([^/]+)$/.exec(url.pathname);
    if (single && lookup) {
      const i = lookup(decodeURIComponent(single[1]!));
      res.writeHead(i === undefined ? 404 : 200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify(
          i === undefined
            ? { error_code: 'ERR_150', status_code: 404, msg: 'not found', details: { operation_id: 'op_y' } }
            : ep(i),
        ),
      );
      return;
    }
    if (url.pathname.endsWith('/events')) {
      if (events) return events(res);
      res.writeHead(404).end();
      return;
    }
    const page = Number(url.searchParams.get('page') ?? '0');
    const plan = pages();
    if (plan[page] === 500) {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          error_code: 'ERR_500',
          status_code: 500,
          msg: 'boom',
          details: { operation_id: 'op_x' },
        }),
      );
      return;
    }
    const n = endpoints();
    const per = Math.ceil(n / plan.length);
    const items = Array.from({ length: n }, (_, i) => ep(i)).slice(page * per, (page + 1) * per);
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const next =
      page + 1 < plan.length ? `${base}/kubernetes_operators/k8sop_x/bound_endpoints?page=${page + 1}` : null;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ endpoints: items, uri: `${base}${req.url ?? ''}`, next_page_uri: next }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

/** A feed against `url` on the real clock, relisted by the test itself. */
function listedFeed(
  url: string,
  onChange: (feed: EndpointFeed) => void = () => undefined,
): { client: ManagementClient; feed: EndpointFeed } {
  const client = new ManagementClient({ baseUrl: url, apiKey: 'k', retry: { retries: 0 } });
  const feed: EndpointFeed = new EndpointFeed({
    client,
    registration: { operatorId: () => 'k8sop_x', lost: async () => undefined, generation: 1 },
    log: silentLogger(),
    metrics: controllerMetrics(new Registry()),
    resyncIntervalMs: 60_000,
    onChange: () => onChange(feed),
  });
  return { client, feed };
}

/** A feed on the manual clock against `url`: polls every 100 ms doubling to 400 ms, resyncs every 60 s. */
function polledFeed(
  url: string,
  extra: { notifications?: false } = {},
): { clock: ManualClock; client: ManagementClient; feed: EndpointFeed } {
  const clock = new ManualClock(Date.UTC(2026, 0, 1), 0);
  const client = new ManagementClient({ baseUrl: url, apiKey: 'k', retry: { retries: 0 } });
  const feed = new EndpointFeed({
    client,
    registration: { operatorId: () => 'k8sop_x', lost: async () => undefined, generation: 1 },
    log: silentLogger(),
    metrics: controllerMetrics(new Registry()),
    resyncIntervalMs: 60_000,
    onChange: () => undefined,
    poll: { initialMs: 100, maxMs: 400 },
    clock,
    ...extra,
  });
  return { clock, client, feed };
}

describe('endpoint feed: listing progress', () => {
  it('counts the endpoints read while a listing runs, and says nothing once it ends', async () => {
    // Page 0 at once, page 1 only when the test lets it go.
    let release: () => void = () => undefined;
    const held = new Promise<void>((r) => (release = r));
    const server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      if (url.pathname.endsWith('/events')) return void res.writeHead(404).end();
      const page = Number(url.searchParams.get('page') ?? '0');
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const send = () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            endpoints: page === 0 ? [ep(0), ep(1), ep(2)] : [ep(3)],
            uri: `${base}${req.url ?? ''}`,
            next_page_uri: page === 0 ? `${base}/kubernetes_operators/k8sop_x/bound_endpoints?page=1` : null,
          }),
        );
      };
      if (page === 0) send();
      else void held.then(send);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { client, feed } = listedFeed(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    try {
      expect(feed.listingProgress, 'before any listing').toBeUndefined();
      const listing = feed.relist('first');
      await waitFor(() => feed.listingProgress === 3 || undefined, 'three endpoints read', {
        timeoutMs: 5_000,
      });
      expect(feed.complete, 'mid-listing').toBe(false);
      release();
      expect(await listing).toBe(true);
      expect(feed.listingProgress, 'after the listing').toBeUndefined();
      expect(feed.size).toBe(4);
    } finally {
      release();
      await client.close();
      server.close();
    }
  });
});

describe('endpoint feed: only a complete listing removes', () => {
  let server: Server | undefined;
  afterEach(() => server?.close());

  it('keeps every endpoint when a listing fails on its second page, and a complete one lacking two only nominates them', async () => {
    let plan: ('ok' | 500)[] = ['ok', 'ok'];
    let count = 4;
    const api = await pagedApi(
      () => plan,
      () => count,
    );
    server = api.server;
    const changes: number[] = [];
    const { client, feed } = listedFeed(api.url, (f) => changes.push(f.size));
    try {
      expect(await feed.relist('first')).toBe(true);
      expect(feed.size).toBe(4);
      expect(feed.complete).toBe(true);

      // Two endpoints are gone, but page 2 fails: a half-read listing removes nothing.
      count = 2;
      plan = ['ok', 500];
      expect(await feed.relist('half-read')).toBe(false);
      expect(feed.size).toBe(4);

      // A complete listing lacking two removes nothing either: it nominates them for their
      // proof (GET /endpoints/{id}; this API answers none, so they stay, with the reason).
      plan = ['ok', 'ok'];
      expect(await feed.relist('complete')).toBe(true);
      expect(feed.size).toBe(4);
      expect(feed.deletionCandidates().map((c) => c.reason)).toEqual([
        'absent from the complete listing #2',
        'absent from the complete listing #2',
      ]);
      expect(await feed.relist('unchanged')).toBe(true);
      expect(changes).toEqual([4]);
    } finally {
      await client.close();
    }
  });

  it('removes an endpoint only on its own not-found proof, and a listing from before the proof does not bring it back', async () => {
    let count = 3;
    const api = await pagedApi(
      () => ['ok'],
      () => count,
      undefined,
      (id) => (id === ep(2).id ? undefined : Number(id.slice(3))),
    );
    server = api.server;
    const { client, feed } = listedFeed(api.url);
    try {
      expect(await feed.relist('first')).toBe(true);
      // The listing lacks the last two; only ep 2 is gone by the API's own answer.
      count = 1;
      expect(await feed.relist('lacking')).toBe(true);
      await waitFor(() => feed.deletionCandidates().length === 0, 'both proofs back');
      expect(
        feed
          .endpoints()
          .map((e) => e.id)
          .sort(),
      ).toEqual([ep(0).id, ep(1).id]);
      expect(feed.snapshot().provenGone).toEqual(new Set([ep(2).id]));
      // A listing that still shows ep 2 (it started before the deletion) does not revive it.
      count = 3;
      expect(await feed.relist('stale')).toBe(true);
      expect(
        feed
          .endpoints()
          .map((e) => e.id)
          .sort(),
      ).toEqual([ep(0).id, ep(1).id]);
    } finally {
      await client.close();
    }
  });

  it('polls on the clock seam while there is no stream: the one backoff doubles on failures and starts over after a success', async () => {
    let plan: ('ok' | 500)[] = [500];
    const api = await pagedApi(
      () => plan,
      () => 2,
    );
    server = api.server;
    const { clock, client, feed } = polledFeed(api.url, { notifications: false });
    const ctl = new AbortController();
    const running = feed.run(ctl.signal);
    try {
      const waits = async (n: number): Promise<void> => {
        await waitFor(() => clock.sleeps.length >= n, `${n} waits`);
      };
      // Each wait is asked for after the previous listing finished.
      for (let n = 1; n <= 4; n++) {
        await waits(n);
        await clock.advance(clock.sleeps[n - 1]!);
      }
      await waits(5); // the fourth listing failed too
      plan = ['ok'];
      await clock.advance(clock.sleeps[4]!);
      await waits(6);
      expect(clock.sleeps.slice(0, 6)).toEqual([100, 200, 400, 400, 400, 100]);
      expect(feed.complete).toBe(true);
      expect(feed.snapshot()).toMatchObject({
        complete: true,
        registration: { operatorId: 'k8sop_x', generation: 1 },
      });
      expect(feed.snapshot().endpoints).toHaveLength(2);
    } finally {
      ctl.abort();
      await running;
      await client.close();
    }
  });

  it('a stream that goes live replaces the poll wait begun before it with the resync interval: no extra listing', async () => {
    let listings = 0;
    const streams: ServerResponse[] = [];
    const api = await pagedApi(
      () => {
        listings++;
        return ['ok'];
      },
      () => 2,
      (res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.flushHeaders();
        streams.push(res);
      },
    );
    server = api.server;
    const { clock, client, feed } = polledFeed(api.url);
    const ctl = new AbortController();
    const running = feed.run(ctl.signal);
    try {
      // Not live yet: the timer waits a poll delay; the stream is connected but silent.
      await waitFor(() => clock.sleeps.length >= 1 && streams.length === 1, 'poll wait and stream');
      expect(clock.sleeps[0]).toBeLessThan(1_000);
      streams[0]!.write('id: 1\nevent: ready\ndata: {"last_event_id":"1"}\n\n');
      await waitFor(() => feed.complete && clock.sleeps.length >= 2, 'initial listing, then the resync wait');
      expect(clock.sleeps[1]).toBe(60_000);
      // The poll delay passing lists nothing more: the stream is live.
      await clock.advance(clock.sleeps[0]!);
      await new Promise((r) => setTimeout(r, 50));
      expect(listings).toBe(1);
      await clock.advance(60_000);
      await waitFor(() => listings === 2, 'periodic resync after the interval');
    } finally {
      ctl.abort();
      for (const res of streams) res.destroy();
      await running;
      await client.close();
    }
  });
});
