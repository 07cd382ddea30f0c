import { isDeepStrictEqual } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startKubesim, type Kubesim } from '../../src/kubesim/index.js';
import { createCache, type Cache, type CacheOptions } from '../../src/kube/cache/reflector.js';
import { listAll } from '../../src/kube/cache/list.js';
import { ServiceSchema, type Service } from '../../src/kube/objects.js';
import { collectionPath, kinds } from '../../src/kube/resources.js';
import { KubeTransport } from '../../src/kube/transport.js';
import { KubeClient } from '../../src/kube/write.js';
import {
  byName,
  captureLogger,
  fastTuning,
  metricValue,
  newRegistry,
  recordingClock,
  service,
  waitFor,
} from './helpers.js';

let sim: Kubesim;
let admin: KubeClient;
let nsCounter = 0;
const caches: Cache<Service>[] = [];

beforeAll(async () => {
  sim = await startKubesim({ bookmarkIntervalMs: 200 });
  admin = new KubeClient(sim.kubeConfig());
});
afterAll(async () => {
  await sim.stop();
});
afterEach(async () => {
  sim.faults.clear();
  await Promise.all(caches.splice(0).map((c) => c.stop()));
});

async function freshNamespace(): Promise<string> {
  const name = `cache-${++nsCounter}`;
  await admin.create(kinds.namespace, { metadata: { name } });
  return name;
}

function startCache(ns: string, extra: Partial<CacheOptions<Service>> = {}) {
  const registry = newRegistry();
  const { logger, lines } = captureLogger();
  const cache = createCache<Service>({
    kubeConfig: sim.kubeConfig(),
    path: collectionPath(kinds.service, ns),
    name: `services-${ns}`,
    schema: ServiceSchema,
    logger,
    metrics: registry,
    options: fastTuning,
    ...extra,
  });
  caches.push(cache);
  return { cache, registry, lines };
}

/** Bounded polling until the cache holds exactly what a fresh list returns (names and RVs). */
async function expectConverged(
  cache: Cache<Service>,
  ns: string,
  mustHave: string[] = [],
  mustLack: string[] = [],
) {
  const transport = new KubeTransport(sim.kubeConfig());
  await waitFor(async () => {
    const fresh = await listAll({
      transport,
      path: collectionPath(kinds.service, ns),
      schema: ServiceSchema,
    });
    const names = fresh.items.map((s) => s.metadata.name);
    if (!mustHave.every((n) => names.includes(n)) || mustLack.some((n) => names.includes(n))) return false;
    return isDeepStrictEqual(byName(cache.list()), byName(fresh.items));
  }, `cache for ${ns} to converge`);
}

describe('cache (reflector + store) against kubesim', () => {
  it('lists in pages, syncs, and follows adds, updates and deletes; a throwing handler does not break it', async () => {
    const ns = await freshNamespace();
    for (let i = 0; i < 7; i++) await admin.create(kinds.service, service(ns, `s${i}`));
    const { cache, registry } = startCache(ns);
    const seen: string[] = [];
    cache.on('add', (s) => seen.push(`add:${s.metadata.name}`));
    cache.on('update', (o, n) =>
      seen.push(`update:${n.metadata.name}:${o.metadata.resourceVersion !== n.metadata.resourceVersion}`),
    );
    cache.on('delete', (s) => seen.push(`delete:${s.metadata.name}`));
    cache.on('add', () => {
      throw new Error('handler bug');
    });
    expect(cache.synced).toBe(false);
    cache.start();
    await cache.waitForSync(AbortSignal.timeout(10_000));
    expect(cache.synced).toBe(true);
    expect(cache.list()).toHaveLength(7);
    expect(cache.get(ns, 's3')?.metadata.name).toBe('s3');
    expect(seen.filter((s) => s.startsWith('add:'))).toHaveLength(7);

    await admin.create(kinds.service, service(ns, 'new'));
    await admin.mergePatch(kinds.service, ns, 's1', { metadata: { labels: { changed: 'yes' } } });
    await admin.deleteIfExists(kinds.service, ns, 's2');
    await waitFor(() => seen.includes('delete:s2'), 'delete event');
    expect(seen).toContain('add:new');
    expect(seen).toContain('update:s1:true');
    expect(cache.get(ns, 's1')?.metadata.labels?.['changed']).toBe('yes');
    await expectConverged(cache, ns, ['new'], ['s2']);
    expect(
      await metricValue(registry, 'endpoint_binder_kube_cache_handler_errors_total'),
    ).toBeGreaterThanOrEqual(8);
    const h = cache.health();
    expect(h).toMatchObject({ synced: true, state: 'watching', consecutiveFailures: 0 });
    expect(h.lastSuccessAt).toBeTypeOf('number');
  });

  it('re-watches from the last RV after the server drops the watch', async () => {
    const ns = await freshNamespace();
    await admin.create(kinds.service, service(ns, 'a'));
    const { cache, registry } = startCache(ns);
    cache.start();
    await cache.waitForSync();
    sim.faults.dropWatches();
    await admin.create(kinds.service, service(ns, 'b'));
    await admin.deleteIfExists(kinds.service, ns, 'a');
    await expectConverged(cache, ns, ['b'], ['a']);
    sim.faults.dropWatches();
    await admin.create(kinds.service, service(ns, 'c'));
    await expectConverged(cache, ns, ['b', 'c'], ['a']);
    // Re-watching from an RV (not relisting) is the normal path after a drop.
    expect(
      await metricValue(registry, 'endpoint_binder_kube_cache_relists_total', { reason: 'initial' }),
    ).toBe(1);
  });

  it('restarts a hung watch via the inactivity watchdog', async () => {
    const ns = await freshNamespace();
    const { cache, registry } = startCache(ns);
    cache.start();
    await cache.waitForSync();
    sim.faults.hangWatches(true);
    await admin.create(kinds.service, service(ns, 'during-hang'));
    await waitFor(
      async () =>
        (await metricValue(registry, 'endpoint_binder_kube_watch_restarts_total', { reason: 'inactive' })) >=
        1,
      'the watchdog to fire',
    );
    sim.faults.hangWatches(false);
    await admin.create(kinds.service, service(ns, 'after-hang'));
    await expectConverged(cache, ns, ['during-hang', 'after-hang']);
  });

  it('relists on 410 Gone after compaction and emits deletes that happened in the gap', async () => {
    const ns = await freshNamespace();
    await admin.create(kinds.service, service(ns, 'old'));
    const { cache, registry } = startCache(ns);
    const deleted: string[] = [];
    cache.on('delete', (s) => deleted.push(s.metadata.name));
    cache.start();
    await cache.waitForSync();
    // Blind the cache, change things, compact history, then let it reconnect from its old RV.
    sim.faults.hangWatches(true);
    await admin.deleteIfExists(kinds.service, ns, 'old');
    await admin.create(kinds.service, service(ns, 'fresh'));
    sim.compact();
    sim.faults.hangWatches(false);
    sim.faults.dropWatches();
    await expectConverged(cache, ns, ['fresh'], ['old']);
    expect(deleted).toContain('old');
    expect(
      await metricValue(registry, 'endpoint_binder_kube_cache_relists_total', { reason: 'gone' }),
    ).toBeGreaterThanOrEqual(1);
  });

  it('backs off on 429 honouring Retry-After, then syncs', async () => {
    const ns = await freshNamespace();
    await admin.create(kinds.service, service(ns, 'x'));
    const clock = recordingClock();
    sim.faults.failRequests({
      status: 429,
      share: 1,
      retryAfterSeconds: 1,
      match: { verb: 'list', resource: 'services' },
    });
    const { cache, registry } = startCache(ns, { clock });
    cache.start();
    await waitFor(
      async () =>
        (await metricValue(registry, 'endpoint_binder_kube_cache_errors_total', { kind: 'throttled' })) >= 1,
      'a throttled list',
    );
    expect(cache.synced).toBe(false);
    expect(cache.health().consecutiveFailures).toBeGreaterThanOrEqual(1);
    sim.faults.clear();
    await cache.waitForSync(AbortSignal.timeout(10_000));
    // The backoff alone would be ≤ 300 ms; Retry-After: 1 raised it to at least 1 s.
    expect(Math.max(...clock.sleeps)).toBeGreaterThanOrEqual(1000);
    expect(cache.health().consecutiveFailures).toBe(0);
    await expectConverged(cache, ns, ['x']);
  });

  it('retries through 500s on list and watch and converges', async () => {
    const ns = await freshNamespace();
    const { cache, registry } = startCache(ns);
    cache.start();
    await cache.waitForSync();
    sim.faults.failRequests({ status: 500, share: 1, match: { verb: 'watch', resource: 'services' } });
    sim.faults.dropWatches();
    await admin.create(kinds.service, service(ns, 'while-failing'));
    await waitFor(
      async () =>
        (await metricValue(registry, 'endpoint_binder_kube_cache_errors_total', { kind: 'server' })) >= 2,
      'server errors to be counted',
    );
    expect(cache.health().lastError).toBeTruthy();
    sim.faults.clear();
    await expectConverged(cache, ns, ['while-failing']);
  });

  it('keeps retrying on 401 (never stops silently) and reports it in health()', async () => {
    const ns = await freshNamespace();
    const { cache, registry, lines } = startCache(ns, { kubeConfig: sim.kubeConfig('not-a-valid-token') });
    cache.start();
    await waitFor(
      async () =>
        (await metricValue(registry, 'endpoint_binder_kube_cache_errors_total', { kind: 'auth' })) >= 3,
      'repeated auth failures',
    );
    expect(cache.synced).toBe(false);
    expect(cache.health()).toMatchObject({ state: expect.stringMatching(/listing|backoff/) });
    expect(cache.health().consecutiveFailures).toBeGreaterThanOrEqual(3);
    expect(
      lines.filter((l) => l['msg'] === 'kube cache list failed' && l['code'] === 401).length,
    ).toBeGreaterThanOrEqual(3);
  });

  it('survives a kubesim restart', async () => {
    const ns = await freshNamespace();
    await admin.create(kinds.service, service(ns, 'before'));
    const { cache } = startCache(ns);
    cache.start();
    await cache.waitForSync();
    await sim.restart();
    await admin.create(kinds.service, service(ns, 'after'));
    await admin.deleteIfExists(kinds.service, ns, 'before');
    await expectConverged(cache, ns, ['after'], ['before']);
  });

  it('skips objects that fail the schema without crashing', async () => {
    const ns = await freshNamespace();
    await admin.create(kinds.service, service(ns, 'good', 80, { tier: 'web' }));
    await admin.create(kinds.service, service(ns, 'bad'));
    const Strict = ServiceSchema.and(
      z.object({ metadata: z.object({ labels: z.object({ tier: z.string() }) }) }),
    );
    const registry = newRegistry();
    const { logger, lines } = captureLogger();
    const cache = createCache({
      kubeConfig: sim.kubeConfig(),
      path: collectionPath(kinds.service, ns),
      schema: Strict,
      logger,
      metrics: registry,
      options: fastTuning,
    });
    cache.start();
    try {
      await cache.waitForSync();
      expect(cache.list().map((s) => s.metadata.name)).toEqual(['good']);
      await admin.create(kinds.service, service(ns, 'bad2'));
      await admin.create(kinds.service, service(ns, 'good2', 80, { tier: 'db' }));
      await waitFor(() => cache.get(ns, 'good2'), 'good2 via watch');
      expect(cache.get(ns, 'bad2')).toBeUndefined();
      expect(await metricValue(registry, 'endpoint_binder_kube_cache_invalid_objects_total')).toBe(2);
      expect(lines.some((l) => l['msg'] === 'kube cache skipped invalid object')).toBe(true);
    } finally {
      await cache.stop();
    }
  });

  it('does a periodic relist as a safety net', async () => {
    const ns = await freshNamespace();
    const { cache, registry } = startCache(ns, { options: { ...fastTuning, relistIntervalMs: 200 } });
    cache.start();
    await cache.waitForSync();
    await waitFor(
      async () =>
        (await metricValue(registry, 'endpoint_binder_kube_cache_relists_total', { reason: 'periodic' })) >=
        2,
      'periodic relists',
    );
    await admin.create(kinds.service, service(ns, 'p'));
    await expectConverged(cache, ns, ['p']);
  });

  it('stop() is final: no resurrection, waiters are rejected', async () => {
    const ns = await freshNamespace();
    const { cache } = startCache(ns);
    const sentinel = startCache(ns).cache;
    cache.start();
    sentinel.start();
    await cache.waitForSync();
    await cache.stop();
    expect(cache.health().state).toBe('stopped');
    cache.start();
    sim.faults.dropWatches();
    await admin.create(kinds.service, service(ns, 'late'));
    await waitFor(() => sentinel.get(ns, 'late'), 'the sentinel cache to see the new object');
    expect(cache.get(ns, 'late')).toBeUndefined();
    expect(cache.health().state).toBe('stopped');
    const never = startCache(ns).cache;
    const waiting = never.waitForSync();
    await never.stop();
    await expect(waiting).rejects.toThrow(/stopped/);
  });
});
