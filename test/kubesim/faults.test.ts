import { describe, expect, it } from 'vitest';
import { api, createSvc, openWatch, sleep, useSim } from './helpers.js';

const start = useSim();
const SVC = '/api/v1/namespaces/default/services';

describe('kubesim fault injection', () => {
  it('dropWatches destroys open watch sockets abruptly', async () => {
    const sim = await start();
    const w = await openWatch(sim, `${SVC}?watch=true`);
    sim.faults.dropWatches();
    expect(await w.ended).toBe('error');
    // New watches work afterwards.
    const w2 = await openWatch(sim, `${SVC}?watch=true`);
    await createSvc(sim, 'default', 'a');
    await w2.waitFor((e) => e.length === 1);
    w2.close();
  });

  it('hangWatches keeps connections open but silent, for open and new watches', async () => {
    const sim = await start({ bookmarkIntervalMs: 10 });
    const open = await openWatch(sim, `${SVC}?watch=true&allowWatchBookmarks=true`);
    sim.faults.hangWatches(true);
    const fresh = await openWatch(sim, `${SVC}?watch=true&timeoutSeconds=1`);
    expect(fresh.status).toBe(200);
    await createSvc(sim, 'default', 'a');
    await sleep(1200);
    expect(open.events.filter((e) => e.type !== 'BOOKMARK')).toEqual([]);
    expect(fresh.events).toEqual([]);
    let ended = false;
    void fresh.ended.then(() => (ended = true));
    await sleep(10);
    expect(ended).toBe(false); // a half-open stream is not closed by its timeout either
    sim.faults.hangWatches(false);
    const after = await openWatch(sim, `${SVC}?watch=true`);
    await after.waitFor((e) => e.length === 1);
    open.close();
    fresh.close();
    after.close();
  });

  it('failRequests 429 with Retry-After, matched by verb and resource', async () => {
    const sim = await start();
    sim.faults.failRequests({
      status: 429,
      share: 1,
      retryAfterSeconds: 7,
      match: { verb: 'list', resource: 'services' },
    });
    const r = await api(sim, 'GET', SVC);
    expect(r.status).toBe(429);
    expect(r.headers['retry-after']).toBe('7');
    expect(r.body).toMatchObject({
      kind: 'Status',
      reason: 'TooManyRequests',
      code: 429,
      details: { retryAfterSeconds: 7 },
    });
    expect((await api(sim, 'GET', '/api/v1/namespaces')).status).toBe(200);
    expect(
      (await api(sim, 'POST', SVC, { metadata: { name: 'a' }, spec: { ports: [{ port: 1 }] } })).status,
    ).toBe(201);
    sim.faults.clear();
    expect((await api(sim, 'GET', SVC)).status).toBe(200);
  });

  it('failRequests 500 and 503 with a deterministic share', async () => {
    const sim = await start();
    sim.faults.failRequests({ status: 500, share: 0.5 });
    const codes: number[] = [];
    for (let i = 0; i < 4; i++) codes.push((await api(sim, 'GET', SVC)).status);
    expect(codes).toEqual([200, 500, 200, 500]);
    sim.faults.clear();
    sim.faults.failRequests({ status: 503, share: 1, match: { verb: 'watch' } });
    const w = await api(sim, 'GET', `${SVC}?watch=true`);
    expect(w.status).toBe(503);
    expect(w.body.reason).toBe('ServiceUnavailable');
    const e = (
      await (async () => {
        sim.faults.clear();
        sim.faults.failRequests({ status: 500, share: 1 });
        return api(sim, 'GET', SVC);
      })()
    ).body;
    expect(e).toMatchObject({ reason: 'InternalError', code: 500 });
  });

  it('latency delays requests', async () => {
    const sim = await start();
    sim.faults.latency(150);
    const t0 = Date.now();
    await api(sim, 'GET', SVC);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(140);
  });

  it('restart drops connections and keeps state and watch history on the same URL', async () => {
    const sim = await start();
    const a = await createSvc(sim, 'default', 'a');
    const w = await openWatch(sim, `${SVC}?watch=true`);
    await w.waitFor((e) => e.length === 1);
    await sim.restart();
    expect(await w.ended).toBe('error');
    const got = await api(sim, 'GET', `${SVC}/a`);
    expect(got.status).toBe(200);
    expect(got.body.metadata.uid).toBe(a.metadata.uid);
    await createSvc(sim, 'default', 'b');
    const resumed = await openWatch(sim, `${SVC}?watch=true&resourceVersion=${a.metadata.resourceVersion}`);
    await resumed.waitFor((e) => e.length === 1);
    expect(resumed.events[0]!.object.metadata.name).toBe('b');
    resumed.close();
  });
});
