import { budget } from '../helpers/budget.js';
import { afterEach, describe, expect, it } from 'vitest';
import { MANAGED_BY_LABEL } from '../../src/binding/identity.js';
import { kinds, type Service } from '../../src/kube/index.js';
import { captureLogs } from '../helpers/logs.js';
import { startApiProxy, type ApiProxy, type ListingPage } from '../helpers/api-proxy.js';
import { OPERATOR_NS, eventually, quietFor, startEnv, type ControllerEnv } from './env.js';

/** Every forwarder port of the install, by internal Service name. */
const ports = (services: Service[]): Record<string, unknown> =>
  Object.fromEntries(
    services
      .filter((s) => s.metadata.namespace === OPERATOR_NS && s.metadata.labels?.[MANAGED_BY_LABEL])
      .map((s) => [s.metadata.name, s.spec?.ports?.map((p) => p.targetPort)]),
  );
const owned = (env: ControllerEnv): number =>
  env.writes.cache.list().filter((s) => s.metadata.labels?.[MANAGED_BY_LABEL]).length;

/** Service deletions as the API server's watch reports them (independent of the controller). */
function countDeletes(env: ControllerEnv): { readonly n: number } {
  const c = { n: 0 };
  env.writes.cache.on('delete', () => c.n++);
  return c;
}

async function readyz(url: string): Promise<{ ready: boolean; reasons: string[] }> {
  const res = await fetch(`${url}/readyz`);
  return (await res.json()) as { ready: boolean; reasons: string[] };
}

describe('controller: a delete stands only on a proof for each endpoint (issue #30 item 2)', () => {
  let env: ControllerEnv | undefined;
  let proxy: ApiProxy | undefined;
  afterEach(async () => {
    await env?.close();
    await proxy?.close();
    env = undefined;
    proxy = undefined;
  });

  it('a follower whose API path is cut takes over and deletes nothing; it is unready while its knowledge is stale', async () => {
    env = await startEnv();
    proxy = await startApiProxy(env.mock.url);
    const a = await env.startController({ identity: 'replica-a' });
    await eventually(() => a.isLeader(), 'a leads');
    const b = await env.startController({
      identity: 'replica-b',
      api: { baseUrl: proxy.url, timeoutMs: 500 },
      bindings: { deletes: { knowledgeMaxAgeSeconds: 1 } },
    });
    for (let i = 0; i < 3; i++) await env.createEndpoint(`http://old-${i}.prod`);
    await eventually(() => b.isReady() && b.status().endpoints.length === 3, 'follower ready with 3');

    proxy.cut(true);
    for (let i = 0; i < 10; i++) await env.createEndpoint(`http://new-${i}.prod`);
    await eventually(() => owned(env!) === 26, '13 endpoints projected by a', 30_000);
    const before = ports(env.writes.cache.list());
    await eventually(async () => !(await readyz(b.url)).ready, 'follower unready on stale knowledge');
    expect((await readyz(b.url)).reasons.join(' ')).toMatch(/endpoint knowledge is \d+ s old/);

    const deletes = countDeletes(env);
    await a.stop();
    await eventually(() => b.isLeader(), 'b takes over');
    // It knows only 3 endpoints, but cannot list under its own term: deletes wait.
    expect(await quietFor(env.writes, 1_500)).toBe(0);
    expect(deletes.n).toBe(0);

    proxy.cut(false);
    await eventually(() => b.status().endpoints.length === 13 && b.isReady(), 'b lists and is ready');
    expect(await quietFor(env.writes, 500)).toBe(0);
    expect(deletes.n).toBe(0);
    expect(ports(env.writes.cache.list())).toEqual(before);
  });

  it('with the operator record deleted, the follower follows the new record and deletes nothing at takeover', async () => {
    env = await startEnv();
    const a = await env.startController({ identity: 'replica-a' });
    await eventually(() => a.isLeader(), 'a leads');
    const b = await env.startController({ identity: 'replica-b' });
    for (let i = 0; i < 10; i++) await env.createEndpoint(`http://svc-${i}.prod`);
    await eventually(() => owned(env!) === 20 && b.status().endpoints.length === 10, 'projected, b knows');
    const before = ports(env.writes.cache.list());
    const first = a.status().operator?.id;
    expect(first).toBeDefined();

    const deletes = countDeletes(env);
    await env.mock.client.kubernetesOperators.delete(first!);
    const second = await eventually(() => {
      const id = a.status().operator?.id;
      return id && id !== first ? id : undefined;
    }, 'a registers again');
    await eventually(() => b.status().operator?.id === second, 'b follows the new record');

    await a.stop();
    await eventually(() => b.isLeader() && b.isReady(), 'b leads');
    expect(await quietFor(env.writes, 1_000)).toBe(0);
    expect(deletes.n).toBe(0);
    expect(ports(env.writes.cache.list())).toEqual(before);
    // One record: the follower never created one of its own.
    const ops = [];
    for await (const op of env.mock.client.kubernetesOperators.list()) ops.push(op.id);
    expect(ops).toEqual([second]);
  });

  it('a truncated first page and an empty middle page delete nothing and change no port', async () => {
    env = await startEnv({ namespaces: ['bulk'] });
    proxy = await startApiProxy(env.mock.url);
    const ctl = await env.startController({ api: { baseUrl: proxy.url } });
    await eventually(() => ctl.isReady(), 'ready');
    for (let i = 0; i < 120; i += 20)
      await Promise.all(Array.from({ length: 20 }, (_, j) => env!.createEndpoint(`http://s-${i + j}.bulk`)));
    await eventually(() => owned(env!) === 240, '240 Services', 60_000);
    await eventually(() => ctl.status().counts['projected'] === 120, 'all projected', 30_000);
    const before = ports(env.writes.cache.list());
    const deletes = countDeletes(env);

    // 1. A full first page that says it is the last: the page after it is read.
    proxy.rewrite((p, i) => (i === 0 ? { ...p, next_page_uri: null } : p));
    expect(await ctl.resyncNow()).toBe(true);
    expect(ctl.status().endpoints.length).toBe(120);

    // 2. An empty page that still names a next page: the listing fails, nothing is removed.
    proxy.rewrite((p, i) =>
      i === 1 ? { ...p, endpoints: [], next_page_uri: `${String(p['uri'])}?limit=100&before_id=ep_0` } : p,
    );
    expect(await ctl.resyncNow()).toBe(false);

    // 3. A short first page that says it is the last (no proof possible): the listing "completes"
    // with 40 endpoints. The 80 it lacks are only nominated: each one's GET finds it.
    let lied = false;
    proxy.rewrite((p, i) => {
      if (i !== 0 || lied) return p;
      lied = true;
      return { ...p, endpoints: p.endpoints.slice(0, 40), next_page_uri: null } satisfies ListingPage;
    });
    expect(await ctl.resyncNow()).toBe(true);
    await eventually(
      () => ctl.status().endpoints.length === 120 && ctl.status().deletionCandidates?.length === 0,
      'every candidate proven to exist',
    );
    proxy.rewrite(undefined);
    expect(await quietFor(env.writes, 800)).toBe(0);
    expect(deletes.n).toBe(0);
    expect(ports(env.writes.cache.list())).toEqual(before);
  });

  it('genuine deletions are each proven by their own GET and carried out, with no listing', async () => {
    env = await startEnv({ namespaces: ['bulk'] });
    const logs = captureLogs('info');
    const ctl = await env.startController({ logger: logs.logger });
    const eps = [];
    for (let i = 0; i < 20; i++) eps.push(await env.createEndpoint(`http://m-${i}.bulk`));
    await eventually(() => owned(env!) === 40 && ctl.status().notificationsLive, '40 Services', 30_000);
    const deletes = countDeletes(env);
    const gone = new Set(eps.slice(0, 15).map((e) => e.id));
    await Promise.all([...gone].map((id) => env!.mock.client.endpoints.delete(id)));
    await eventually(() => owned(env!) === 10, 'deleted on their proofs', 30_000);
    expect(deletes.n).toBe(30);
    const proven = logs.lines.filter((l) => l['msg'] === 'endpoint deletion proven');
    expect(new Set(proven.map((l) => l['endpointId']))).toEqual(gone);
    expect(proven.every((l) => l['proof'] === 'ERR_150')).toBe(true);
    expect(ctl.status().endpoints.length).toBe(5);
  });

  it('a false endpoint.deleted removes nothing, also when something in between answers its GET with a bare 404 or an HTML page', async () => {
    env = await startEnv();
    proxy = await startApiProxy(env.mock.url);
    const ctl = await env.startController({ api: { baseUrl: proxy.url } });
    const ep = await env.createEndpoint('http://api.prod');
    const gone = await env.createEndpoint('http://gone.prod');
    await eventually(() => owned(env!) === 4 && ctl.status().notificationsLive, 'projected, live');
    const deletes = countDeletes(env);
    const falseDelete = `event: endpoint.deleted\ndata: ${JSON.stringify({ endpoint: { id: ep.id, uri: ep.uri, url: ep.url } })}\n\n`;

    // The API's own GET answers: the endpoint exists, the candidate is dropped.
    expect(proxy.inject(falseDelete)).toBeGreaterThan(0);
    await eventually(
      () => proxy!.endpointGets >= 1 && ctl.status().deletionCandidates?.length === 0,
      'proof: exists',
    );
    // A bare 404 and an HTML 404 page prove nothing: the candidate stays, with the reason in /status.
    for (const answer of [
      { status: 404, contentType: 'text/plain', body: '' },
      { status: 404, contentType: 'text/html', body: '<html><body><h1>404 Not Found</h1></body></html>' },
    ]) {
      proxy.answerEndpointGets(answer);
      const gets = proxy.endpointGets;
      expect(proxy.inject(falseDelete)).toBeGreaterThan(0);
      await eventually(() => proxy!.endpointGets > gets || undefined, 'proof asked');
      const candidate = await eventually(
        () => ctl.status().deletionCandidates?.find((c) => c.id === ep.id && c.lastError),
        'candidate kept with its reason',
      );
      expect(candidate.reason).toBe('endpoint.deleted notification');
      expect(candidate.lastError).toMatch(/HTTP 404/);
      expect(await quietFor(env.writes, 800)).toBe(0);
      proxy.answerEndpointGets(undefined);
      await eventually(() => ctl.status().deletionCandidates?.length === 0 || undefined, 'exists after all');
    }
    expect(deletes.n).toBe(0);
    expect(ctl.status().endpoints.find((e) => e.id === ep.id)?.state).toBe('projected');

    // A genuine deletion: the notification nominates, the API's not-found proves; no listing asked.
    const pages = proxy.pagesServed;
    await env.mock.client.endpoints.delete(gone.id);
    await eventually(() => deletes.n === 2 || undefined, 'both Services of gone removed', 5_000);
    expect(proxy.pagesServed).toBe(pages);
    expect(await env.service('prod', 'api')).toBeDefined();
  });

  it(
    'two listings lacking different sets, and one lacking 15 of 250, delete nothing and move no port',
    async () => {
      env = await startEnv({ namespaces: ['bulk'] });
      proxy = await startApiProxy(env.mock.url);
      const ctl = await env.startController({ api: { baseUrl: proxy.url } });
      await eventually(() => ctl.isReady(), 'ready');
      for (let i = 0; i < 250; i += 25)
        await Promise.all(
          Array.from({ length: 25 }, (_, j) => env!.createEndpoint(`http://s-${i + j}.bulk`)),
        );
      await eventually(() => owned(env!) === 500, '500 Services', 120_000);
      await eventually(() => ctl.status().counts['projected'] === 250, 'all projected', 60_000);
      const before = ports(env.writes.cache.list());
      const deletes = countDeletes(env);
      const ids = ctl.status().endpoints.map((e) => e.id);
      const lacking = (set: Set<string>) => (p: ListingPage) => ({
        ...p,
        endpoints: p.endpoints.filter((e) => !set.has((e as { id: string }).id)),
      });

      // Listing 1 lacks one set, listing 2 another: each only nominates, each GET finds its endpoint.
      proxy.rewrite(lacking(new Set(ids.slice(0, 60))));
      expect(await ctl.resyncNow()).toBe(true);
      proxy.rewrite(lacking(new Set(ids.slice(60, 120))));
      expect(await ctl.resyncNow()).toBe(true);
      // One listing lacking 15 of 250.
      proxy.rewrite(lacking(new Set(ids.slice(200, 215))));
      expect(await ctl.resyncNow()).toBe(true);
      proxy.rewrite(undefined);
      await eventually(
        // Each one's GET found it, or a later listing showed it again (the last one's 15 by GET).
        () => proxy!.endpointGets >= 15 && ctl.status().deletionCandidates?.length === 0,
        'every candidate shown to exist',
        30_000,
      );
      expect(await quietFor(env.writes, 800)).toBe(0);
      expect(deletes.n).toBe(0);
      expect(ctl.status().endpoints.length).toBe(250);
      expect(ports(env.writes.cache.list())).toEqual(before);
    },
    budget(180_000),
  );

  it('the Services of a namespace labelled aliases=disabled go while the API path is cut; the others stay', async () => {
    // A delete that follows from a cluster fact (a tenant's opt-out, the deny list) needs no API
    // listing and no proof from the API: it is applied while every call to the API fails.
    env = await startEnv({ namespaces: ['team', 'other'] });
    proxy = await startApiProxy(env.mock.url);
    const ctl = await env.startController({ api: { baseUrl: proxy.url, timeoutMs: 500 } });
    const eps: { id: string }[] = [];
    for (let i = 0; i < 12; i++) eps.push(await env.createEndpoint(`http://svc-${i}.team`));
    const other = await env.createEndpoint('http://keep.other');
    await eventually(() => ctl.status().counts['projected'] === 13 || undefined, 'all projected');

    // Every listing, proof and notification fails from now on. 12 alias deletes of 26 Services:
    // what the old count-based rule held for a confirming listing that could never come.
    proxy.cut(true);
    await eventually(() => !ctl.status().notificationsLive || undefined, 'notifications down');
    await env.kube.mergePatch(kinds.namespace, undefined, 'team', {
      metadata: { labels: { 'endpoint-binder.io/aliases': 'disabled' } },
    });
    await eventually(async () => {
      for (let i = 0; i < 12; i++) if (await env!.service('team', `svc-${i}`)) return undefined;
      for (const e of eps) if (await env!.internalOf(e.id)) return undefined;
      return true;
    }, "every alias in the opted-out namespace and its endpoints' internal Services deleted");
    // Nothing else moved: the other namespace's alias and internal Service stand.
    expect(await env.service('other', 'keep')).toBeDefined();
    expect(await env.internalOf(other.id)).toBeDefined();
    expect(ctl.status().endpoints.filter((e) => e.state === 'namespace-denied')).toHaveLength(12);
  });
});

describe('controller: ports survive a mistaken removal', () => {
  let env: ControllerEnv | undefined;
  afterEach(async () => {
    await env?.close();
    env = undefined;
  });

  it('an endpoint removed and created again within the grace gets its old forwarder port', async () => {
    env = await startEnv();
    const ctl = await env.startController();
    const first = await env.createEndpoint('http://api.prod');
    const internal = await eventually(() => env!.internalOf(first.id), 'projected');
    const port = internal.spec?.ports?.[0]?.targetPort;
    await env.mock.client.endpoints.delete(first.id);
    await eventually(
      async () => !(await env!.internalOf(first.id)) && !(await env!.service('prod', 'api')),
      'removed',
    );
    const again = await env.createEndpoint('http://api.prod');
    const back = await eventually(() => env!.internalOf(again.id), 'projected again');
    expect(back.spec?.ports?.[0]?.targetPort).toBe(port);
    expect(ctl.status().endpoints.find((e) => e.id === again.id)?.targetPort).toBe(port);
  });
});
