import { describe, expect, it } from 'vitest';
import { api, createNs, createSvc, openWatch, sleep, useSim } from './helpers.js';

const start = useSim();
const SVC = '/api/v1/namespaces/default/services';
const types = (evs: { type: string }[]) => evs.map((e) => e.type);

describe('kubesim watch', () => {
  it('without resourceVersion: current state as ADDED, then live events', async () => {
    const sim = await start();
    await createSvc(sim, 'default', 'a');
    const w = await openWatch(sim, `${SVC}?watch=true`);
    expect(w.status).toBe(200);
    await w.waitFor((e) => e.length === 1);
    expect(w.events[0]).toMatchObject({
      type: 'ADDED',
      object: { kind: 'Service', apiVersion: 'v1', metadata: { name: 'a' } },
    });
    const b = await createSvc(sim, 'default', 'b');
    await api(
      sim,
      'PATCH',
      `${SVC}/b`,
      { metadata: { labels: { x: 'y' } } },
      { contentType: 'application/merge-patch+json' },
    );
    await api(sim, 'DELETE', `${SVC}/b`);
    await w.waitFor((e) => e.length === 4);
    expect(types(w.events)).toEqual(['ADDED', 'ADDED', 'MODIFIED', 'DELETED']);
    const del = w.events[3]!.object;
    expect(del.metadata.name).toBe('b');
    expect(Number(del.metadata.resourceVersion)).toBeGreaterThan(Number(b.metadata.resourceVersion));
    w.close();
  });

  it('from a resourceVersion: replays only later events (watch=1 works too)', async () => {
    const sim = await start();
    const a = await createSvc(sim, 'default', 'a');
    await createSvc(sim, 'default', 'b');
    await api(sim, 'DELETE', `${SVC}/a`);
    const w = await openWatch(sim, `${SVC}?watch=1&resourceVersion=${a.metadata.resourceVersion}`);
    await w.waitFor((e) => e.length === 2);
    expect(w.events.map((e) => `${e.type} ${e.object.metadata.name}`)).toEqual(['ADDED b', 'DELETED a']);
    w.close();
  });

  it('only events of the watched namespace and resource', async () => {
    const sim = await start();
    const w = await openWatch(
      sim,
      `${SVC}?watch=true&resourceVersion=${(await api(sim, 'GET', SVC)).body.metadata.resourceVersion}`,
    );
    await createSvc(sim, 'kube-system', 'other');
    await api(sim, 'POST', '/apis/coordination.k8s.io/v1/namespaces/default/leases', {
      metadata: { name: 'l' },
    });
    await createSvc(sim, 'default', 'mine');
    await w.waitFor((e) => e.length >= 1);
    expect(w.events.map((e) => e.object.metadata.name)).toEqual(['mine']);
    w.close();
  });

  it('selectors: leaving the selection is DELETED, entering is ADDED', async () => {
    const sim = await start();
    const s = await createSvc(sim, 'default', 's', { app: 'web' });
    const w = await openWatch(
      sim,
      `${SVC}?watch=true&labelSelector=app%3Dweb&resourceVersion=${s.metadata.resourceVersion}`,
    );
    const patch = (labels: Record<string, string | null>) =>
      api(
        sim,
        'PATCH',
        `${SVC}/s`,
        { metadata: { labels } },
        { contentType: 'application/merge-patch+json' },
      );
    await patch({ app: 'db' });
    await patch({ app: 'web' });
    await patch({ extra: '1' });
    await createSvc(sim, 'default', 'other', { app: 'db' });
    await w.waitFor((e) => e.length === 3);
    expect(types(w.events)).toEqual(['DELETED', 'ADDED', 'MODIFIED']);
    // The DELETED carries the previous content with the event's resourceVersion.
    expect(w.events[0]!.object.metadata.labels).toEqual({ app: 'web' });
    expect(Number(w.events[0]!.object.metadata.resourceVersion)).toBeGreaterThan(
      Number(s.metadata.resourceVersion),
    );
    w.close();
  });

  it('field selector and the legacy /watch/ path for one object', async () => {
    const sim = await start();
    await createSvc(sim, 'default', 'a');
    await createSvc(sim, 'default', 'b');
    const w = await openWatch(sim, '/api/v1/watch/namespaces/default/services/b');
    await w.waitFor((e) => e.length === 1);
    expect(w.events[0]!.object.metadata.name).toBe('b');
    const f = await openWatch(sim, `${SVC}?watch=true&fieldSelector=metadata.name%3Da`);
    await f.waitFor((e) => e.length === 1);
    expect(f.events[0]!.object.metadata.name).toBe('a');
    w.close();
    f.close();
  });

  it('BOOKMARK events at the configured interval when asked for, once the RV has moved past the start', async () => {
    const sim = await start({ bookmarkIntervalMs: 20 });
    const s = await createSvc(sim, 'default', 'a');
    const w = await openWatch(
      sim,
      `${SVC}?watch=true&allowWatchBookmarks=true&resourceVersion=${s.metadata.resourceVersion}`,
    );
    // Nothing newer than the start RV: no bookmark (the cacher sends none at or below it).
    await sleep(100);
    expect(w.events).toEqual([]);
    await createNs(sim, 'elsewhere');
    const ns = await api(sim, 'GET', '/api/v1/namespaces/elsewhere');
    await w.waitFor((e) => e.filter((x) => x.type === 'BOOKMARK').length >= 2);
    const bm = w.events.find((e) => e.type === 'BOOKMARK')!;
    expect(bm.object).toEqual({
      kind: 'Service',
      apiVersion: 'v1',
      metadata: { resourceVersion: ns.body.metadata.resourceVersion },
    });
    const plain = await openWatch(
      sim,
      `${SVC}?watch=true&resourceVersion=${s.metadata.resourceVersion}&timeoutSeconds=1`,
    );
    await plain.ended;
    expect(plain.events).toEqual([]);
    w.close();
  });

  it('sendInitialEvents ends the initial state with an annotated BOOKMARK', async () => {
    const sim = await start();
    await createSvc(sim, 'default', 'a');
    const w = await openWatch(
      sim,
      `${SVC}?watch=true&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan`,
    );
    await w.waitFor((e) => e.length === 2);
    expect(types(w.events)).toEqual(['ADDED', 'BOOKMARK']);
    expect(w.events[1]!.object.metadata.annotations).toEqual({ 'k8s.io/initial-events-end': 'true' });
    w.close();
    const bad = await api(sim, 'GET', `${SVC}?watch=true&sendInitialEvents=true`);
    expect(bad.status).toBe(422);
  });

  it('timeoutSeconds closes the stream cleanly', async () => {
    const sim = await start();
    const w = await openWatch(sim, `${SVC}?watch=true&timeoutSeconds=1`);
    expect(await w.ended).toBe('end');
  });

  it('a compacted resourceVersion → in-stream ERROR 410 Expired, then close', async () => {
    const sim = await start();
    const a = await createSvc(sim, 'default', 'a');
    await createSvc(sim, 'default', 'b');
    sim.compact();
    const w = await openWatch(sim, `${SVC}?watch=true&resourceVersion=${a.metadata.resourceVersion}`);
    expect(w.status).toBe(200);
    expect(await w.ended).toBe('end');
    expect(w.events).toHaveLength(1);
    expect(w.events[0]).toMatchObject({
      type: 'ERROR',
      object: { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Expired', code: 410 },
    });
    expect(w.events[0]!.object.message).toMatch(/^too old resource version: /);
  });

  it('bad watch parameters are rejected before streaming', async () => {
    const sim = await start();
    // The watch cache's parse error, answered as a bare 500 (test/fidelity/watches.ts).
    expect((await api(sim, 'GET', `${SVC}?watch=true&resourceVersion=abc`)).status).toBe(500);
    expect((await api(sim, 'GET', `${SVC}?watch=true&labelSelector=a%20in`)).status).toBe(400);
    expect((await api(sim, 'GET', `${SVC}?watch=maybe`)).status).toBe(400);
  });
});
