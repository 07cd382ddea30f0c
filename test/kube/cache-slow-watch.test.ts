import { connect, createServer, type Server, type Socket } from 'node:net';
import { isDeepStrictEqual } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { listAll } from '../../src/kube/cache/list.js';
import { createCache, type Cache } from '../../src/kube/cache/reflector.js';
import { ServiceSchema, type Service } from '../../src/kube/objects.js';
import { collectionPath, kinds } from '../../src/kube/resources.js';
import { KubeTransport } from '../../src/kube/transport.js';
import { KubeClient } from '../../src/kube/write.js';
import { startKubesim, type Kubesim, type KubesimOptions } from '../../src/kubesim/index.js';
import { buildKubeConfig } from '../../src/kubesim/kubeconfig.js';
import { captureLogs } from '../helpers/logs.js';
import { byName, captureLogger, fastTuning, metricValue, newRegistry, service, waitFor } from './helpers.js';

/**
 * The reflector against kubesim closing its watch because it read too slowly. The cache talks
 * to kubesim through a loopback TCP proxy that can stop reading from kubesim, which is what a
 * stalled client looks like from the server's side. kubesim then ends the watch; once the proxy
 * reads again, the cache must resume from its last RV (or relist after a 410) and end up with
 * exactly the objects kubesim has.
 */

const CLOSED = 'kubesim closed a slow watcher';
const PAD = 'x'.repeat(100_000);

interface Proxy {
  url: string;
  /** Stops reading from kubesim on every connection (open and new). */
  pause(): void;
  resume(): void;
  close(): Promise<void>;
}

async function startProxy(target: URL): Promise<Proxy> {
  const upstreams = new Set<Socket>();
  let paused = false;
  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port), target.hostname);
    upstreams.add(upstream);
    client.pipe(upstream);
    upstream.pipe(client);
    if (paused) upstream.pause();
    const done = () => {
      upstreams.delete(upstream);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', done);
    upstream.on('error', done);
    client.on('close', done);
    upstream.on('close', done);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const addr = server.address();
  if (!addr || typeof addr === 'string') throw new Error('no proxy address');
  return {
    url: `http://127.0.0.1:${addr.port}`,
    pause() {
      paused = true;
      for (const u of upstreams) u.pause();
    },
    resume() {
      paused = false;
      for (const u of upstreams) u.resume();
    },
    close() {
      for (const u of upstreams) u.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface Setup {
  sim: Kubesim;
  admin: KubeClient;
  proxy: Proxy;
  cache: Cache<Service>;
  registry: ReturnType<typeof newRegistry>;
  simLogs: ReturnType<typeof captureLogs>;
  deletes: string[];
}

async function setup(opts: KubesimOptions): Promise<Setup> {
  const simLogs = captureLogs('info');
  const sim = await startKubesim({ bookmarkIntervalMs: 60_000, ...opts, logger: simLogs.logger });
  cleanups.push(() => sim.stop());
  const admin = new KubeClient(sim.kubeConfig());
  await admin.create(kinds.namespace, { metadata: { name: 'slow' } });
  for (const name of ['big', 'gone', 'probe']) await admin.create(kinds.service, service('slow', name));
  const proxy = await startProxy(new URL(sim.url));
  cleanups.push(() => proxy.close());

  const registry = newRegistry();
  const cacheLogs = captureLogger();
  const cache = createCache<Service>({
    kubeConfig: buildKubeConfig(proxy.url, sim.adminToken),
    path: collectionPath(kinds.service, 'slow'),
    name: 'slow',
    schema: ServiceSchema,
    logger: cacheLogs.logger,
    metrics: registry,
    // A stalled stream must be closed by kubesim here, not by the client's own watchdog.
    options: { ...fastTuning, inactivityMs: 120_000 },
  });
  cleanups.push(() => cache.stop());
  const deletes: string[] = [];
  cache.on('delete', (s) => deletes.push(s.metadata.name));
  cache.start();
  await cache.waitForSync();
  // The watch is live once a write made after the list reaches the cache.
  await admin.mergePatch(kinds.service, 'slow', 'probe', { metadata: { labels: { live: 'yes' } } });
  await waitFor(() => cache.get('slow', 'probe')?.metadata.labels?.['live'] === 'yes', 'watch live');
  return { sim, admin, proxy, cache, registry, simLogs, deletes };
}

/** Stalls the cache's stream and writes until kubesim closes it, then changes more. */
async function stallUntilClosed(s: Setup): Promise<number> {
  s.proxy.pause();
  let seq = 0;
  while (s.simLogs.count(CLOSED) === 0 && seq < 400) {
    seq++;
    await s.admin.mergePatch(kinds.service, 'slow', 'big', {
      metadata: { annotations: { seq: String(seq), pad: PAD } },
    });
  }
  expect(s.simLogs.count(CLOSED)).toBe(1);
  // Changes the closed stream never carried: a create, a delete, a last update.
  await s.admin.create(kinds.service, service('slow', 'new'));
  await s.admin.deleteIfExists(kinds.service, 'slow', 'gone');
  seq++;
  await s.admin.mergePatch(kinds.service, 'slow', 'big', { metadata: { annotations: { seq: String(seq) } } });
  return seq;
}

async function expectConverged(s: Setup, seq: number): Promise<void> {
  const transport = new KubeTransport(s.sim.kubeConfig());
  const truth = async () =>
    (await listAll({ transport, path: collectionPath(kinds.service, 'slow'), schema: ServiceSchema })).items;
  await waitFor(
    async () => isDeepStrictEqual(byName(s.cache.list()), byName(await truth())),
    'cache equal to kubesim',
    { timeoutMs: 20_000 },
  );
  expect(byName(s.cache.list())).toEqual(byName(await truth()));
  expect(
    s.cache
      .list()
      .map((o) => o.metadata.name)
      .sort(),
  ).toEqual(['big', 'new', 'probe']);
  expect(s.cache.get('slow', 'big')?.metadata.annotations?.['seq']).toBe(String(seq));
  expect(s.deletes).toEqual(['gone']);
}

describe('cache whose watch kubesim closed as too slow', () => {
  it('resumes from its last resourceVersion and misses nothing', async () => {
    const s = await setup({ watchBufferBytes: 256 * 1024 });
    const seq = await stallUntilClosed(s);
    s.proxy.resume();
    await expectConverged(s, seq);
    expect(
      await metricValue(s.registry, 'endpoint_binder_kube_watch_restarts_total', { reason: 'closed' }),
    ).toBeGreaterThan(0);
    expect(
      await metricValue(s.registry, 'endpoint_binder_kube_cache_relists_total', { reason: 'gone' }),
    ).toBe(0);
  });

  it('relists when the history it would resume from was compacted meanwhile', async () => {
    const s = await setup({ watchBufferBytes: 256 * 1024, compactionWindow: 5 });
    const seq = await stallUntilClosed(s);
    s.proxy.resume();
    await expectConverged(s, seq);
    expect(
      await metricValue(s.registry, 'endpoint_binder_kube_cache_relists_total', { reason: 'gone' }),
    ).toBeGreaterThan(0);
  });
});
