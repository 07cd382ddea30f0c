import { describe, expect, it } from 'vitest';
import { api, createNs, createSvc, useSim } from './helpers.js';

const start = useSim();
const SVC = '/api/v1/namespaces/default/services';

async function seed(sim: Awaited<ReturnType<ReturnType<typeof useSim>>>) {
  await createSvc(sim, 'default', 'a', { app: 'web', tier: 'front' });
  await createSvc(sim, 'default', 'b', { app: 'web', tier: 'back' });
  await createSvc(sim, 'default', 'c', { app: 'db' });
  await createSvc(sim, 'default', 'd');
}

const names = (body: { items: { metadata: { name: string } }[] }) => body.items.map((i) => i.metadata.name);

describe('kubesim list', () => {
  it('returns a typed list: kind, apiVersion, metadata.resourceVersion, items without kind/apiVersion', async () => {
    const sim = await start();
    await seed(sim);
    const r = await api(sim, 'GET', SVC);
    expect(r.body.kind).toBe('ServiceList');
    expect(r.body.apiVersion).toBe('v1');
    expect(r.body.metadata.resourceVersion).toMatch(/^\d+$/);
    expect(r.body.metadata.continue).toBeUndefined();
    expect(names(r.body)).toEqual(['a', 'b', 'c', 'd']);
    expect(r.body.items[0].kind).toBeUndefined();
    expect(r.body.items[0].apiVersion).toBeUndefined();
  });

  it('lists per namespace and cluster-wide', async () => {
    const sim = await start();
    await createNs(sim, 'other');
    await createSvc(sim, 'default', 'x');
    await createSvc(sim, 'other', 'y');
    expect(names((await api(sim, 'GET', '/api/v1/namespaces/other/services')).body)).toEqual(['y']);
    const all = await api(sim, 'GET', '/api/v1/services');
    expect(
      all.body.items.map(
        (i: { metadata: { namespace: string; name: string } }) =>
          `${i.metadata.namespace}/${i.metadata.name}`,
      ),
    ).toEqual(['default/x', 'other/y']);
    const ns = await api(sim, 'GET', '/api/v1/namespaces');
    expect(names(ns.body)).toEqual(['default', 'kube-system', 'other']);
    expect(ns.body.items[0].metadata.labels).toEqual({ 'kubernetes.io/metadata.name': 'default' });
    expect(ns.body.items[0].status.phase).toBe('Active');
  });

  it('label selectors: equality and set-based', async () => {
    const sim = await start();
    await seed(sim);
    const q = async (sel: string) =>
      names((await api(sim, 'GET', `${SVC}?labelSelector=${encodeURIComponent(sel)}`)).body);
    expect(await q('app=web')).toEqual(['a', 'b']);
    expect(await q('app==web,tier=back')).toEqual(['b']);
    expect(await q('app!=web')).toEqual(['c', 'd']);
    expect(await q('app in (db, web)')).toEqual(['a', 'b', 'c']);
    expect(await q('app notin (web)')).toEqual(['c', 'd']);
    expect(await q('tier')).toEqual(['a', 'b']);
    expect(await q('!tier')).toEqual(['c', 'd']);
    expect(await q('')).toEqual(['a', 'b', 'c', 'd']);
  });

  it('field selectors on metadata.name / metadata.namespace', async () => {
    const sim = await start();
    await seed(sim);
    const q = async (sel: string, path = SVC) =>
      names((await api(sim, 'GET', `${path}?fieldSelector=${encodeURIComponent(sel)}`)).body);
    expect(await q('metadata.name=b')).toEqual(['b']);
    expect(await q('metadata.name==c')).toEqual(['c']);
    expect(await q('metadata.name!=a')).toEqual(['b', 'c', 'd']);
    expect(await q('metadata.namespace=default', '/api/v1/services')).toHaveLength(4);
    expect(await q('metadata.namespace!=default', '/api/v1/services')).toHaveLength(0);
  });

  it('bad selectors → 400 BadRequest', async () => {
    const sim = await start();
    for (const sel of ['app in web', 'app=(x', 'a b', 'app in ()', '=x']) {
      const r = await api(sim, 'GET', `${SVC}?labelSelector=${encodeURIComponent(sel)}`);
      expect(r.status, sel).toBe(400);
      expect(r.body.reason).toBe('BadRequest');
    }
    const f = await api(sim, 'GET', `${SVC}?fieldSelector=spec.foo%3Dx`);
    expect(f.status).toBe(400);
    // The server's words; kubectl prefixes `Unable to find "/v1, Resource=services" that match ...` itself.
    expect(f.body.message).toBe('field label not supported: spec.foo');
    const g = await api(sim, 'GET', `${SVC}?fieldSelector=garbage`);
    expect(g.status).toBe(400);
    expect(g.body.message).toBe("invalid selector: 'garbage'; can't understand 'garbage'");
    const limit = await api(sim, 'GET', `${SVC}?limit=abc`);
    expect(limit.status).toBe(400);
  });

  it('paginates with limit/continue at a consistent snapshot', async () => {
    const sim = await start();
    await seed(sim);
    const p1 = await api(sim, 'GET', `${SVC}?limit=2`);
    expect(names(p1.body)).toEqual(['a', 'b']);
    expect(p1.body.metadata.remainingItemCount).toBe(2);
    const token = p1.body.metadata.continue as string;
    expect(token).toBeTruthy();
    // Changes after the first page are not visible on later pages.
    await api(sim, 'DELETE', `${SVC}/c`);
    await createSvc(sim, 'default', 'e');
    const p2 = await api(sim, 'GET', `${SVC}?limit=2&continue=${encodeURIComponent(token)}`);
    expect(names(p2.body)).toEqual(['c', 'd']);
    expect(p2.body.metadata.resourceVersion).toBe(p1.body.metadata.resourceVersion);
    expect(p2.body.metadata.continue).toBeUndefined();
    // A fresh list sees the new state.
    expect(names((await api(sim, 'GET', SVC)).body)).toEqual(['a', 'b', 'd', 'e']);
  });

  it('limit with a selector omits remainingItemCount', async () => {
    const sim = await start();
    await seed(sim);
    const r = await api(sim, 'GET', `${SVC}?limit=1&labelSelector=app`);
    expect(names(r.body)).toEqual(['a']);
    expect(r.body.metadata.continue).toBeTruthy();
    expect(r.body.metadata.remainingItemCount).toBeUndefined();
    const r2 = await api(
      sim,
      'GET',
      `${SVC}?limit=5&labelSelector=app&continue=${encodeURIComponent(r.body.metadata.continue)}`,
    );
    expect(names(r2.body)).toEqual(['b', 'c']);
  });

  it('an expired continue token → 410 Expired with a fresh token; a bad token → 400', async () => {
    const sim = await start();
    await seed(sim);
    const p1 = await api(sim, 'GET', `${SVC}?limit=1`);
    await createSvc(sim, 'default', 'zz');
    sim.compact();
    const r = await api(
      sim,
      'GET',
      `${SVC}?limit=1&continue=${encodeURIComponent(p1.body.metadata.continue)}`,
    );
    expect(r.status).toBe(410);
    expect(r.body.reason).toBe('Expired');
    expect(r.body.message).toContain('The provided continue parameter is too old');
    const fresh = r.body.metadata.continue as string;
    const rest = await api(sim, 'GET', `${SVC}?continue=${encodeURIComponent(fresh)}`);
    expect(names(rest.body)).toEqual(['b', 'c', 'd', 'zz']);
    const bad = await api(sim, 'GET', `${SVC}?continue=bm9wZQ`);
    expect(bad.status).toBe(400);
    const withRv = await api(sim, 'GET', `${SVC}?continue=${encodeURIComponent(fresh)}&resourceVersion=5`);
    expect(withRv.status).toBe(400);
  });

  it('resourceVersion + resourceVersionMatch=Exact reads history; compacted → 410; future → 504', async () => {
    const sim = await start({ futureResourceVersionWaitMs: 50 });
    const a = await createSvc(sim, 'default', 'a');
    await createSvc(sim, 'default', 'b');
    const exact = await api(
      sim,
      'GET',
      `${SVC}?resourceVersion=${a.metadata.resourceVersion}&resourceVersionMatch=Exact`,
    );
    expect(names(exact.body)).toEqual(['a']);
    expect(exact.body.metadata.resourceVersion).toBe(a.metadata.resourceVersion);
    const notOlder = await api(
      sim,
      'GET',
      `${SVC}?resourceVersion=${a.metadata.resourceVersion}&resourceVersionMatch=NotOlderThan`,
    );
    expect(names(notOlder.body)).toEqual(['a', 'b']);
    sim.compact();
    const gone = await api(
      sim,
      'GET',
      `${SVC}?resourceVersion=${a.metadata.resourceVersion}&resourceVersionMatch=Exact`,
    );
    expect(gone.status).toBe(410);
    expect(gone.body).toMatchObject({ reason: 'Expired', code: 410 });
    expect(gone.body.message).toMatch(/^too old resource version: \d+ \(\d+\)$/);
    const future = await api(sim, 'GET', `${SVC}?resourceVersion=999999`);
    expect(future.status).toBe(504);
    expect(future.body.details.causes[0].reason).toBe('ResourceVersionTooLarge');
    const matchOnly = await api(sim, 'GET', `${SVC}?resourceVersionMatch=Exact`);
    expect(matchOnly.status).toBe(422);
  });

  it('the compaction window bounds history on its own', async () => {
    const sim = await start({ compactionWindow: 3 });
    const a = await createSvc(sim, 'default', 'a');
    for (const n of ['b', 'c', 'd', 'e']) await createSvc(sim, 'default', n);
    const gone = await api(
      sim,
      'GET',
      `${SVC}?resourceVersion=${a.metadata.resourceVersion}&resourceVersionMatch=Exact`,
    );
    expect(gone.status).toBe(410);
  });
});
