import {
  ApiException,
  CoordinationV1Api,
  CoreV1Api,
  KubernetesObjectApi,
  makeInformer,
  PatchStrategy,
  setHeaderOptions,
  Watch,
  type V1Service,
} from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { useSim } from './helpers.js';
import { conditionOf, pollUntil } from '../helpers/wait.js';

/**
 * The same small scenario through @kubernetes/client-node 1.4's own APIs: kubesim must be
 * indistinguishable from a real API server to the official client.
 */

const start = useSim();

async function waitUntil(cond: () => boolean, timeoutMs = 3000): Promise<void> {
  await pollUntil(conditionOf(cond), cond, (v) => v, { timeoutMs, intervalMs: 10, onError: 'throw' });
}

/** ApiException.body is the raw response text in 1.4; callers JSON-parse it for reason/message. */
async function apiError(
  p: Promise<unknown>,
): Promise<{ code: number; body: { reason?: string; message?: string } }> {
  try {
    await p;
  } catch (err) {
    if (err instanceof ApiException) {
      const raw: unknown = err.body;
      return { code: err.code, body: typeof raw === 'string' && raw ? JSON.parse(raw) : {} };
    }
    throw err;
  }
  throw new Error('expected an ApiException');
}

function service(name: string, labels: Record<string, string> = {}): V1Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, labels },
    spec: { ports: [{ name: 'http', port: 80, targetPort: 8080 }], selector: { app: name } },
  };
}

describe('@kubernetes/client-node 1.4 against kubesim', () => {
  it('CoreV1Api: create, list, replace (stale RV → 409), merge patch, delete, 422', async () => {
    const sim = await start();
    const core = sim.kubeConfig().makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: 'app' } } });
    const created = await core.createNamespacedService({ namespace: 'app', body: service('web') });
    expect(created.spec?.clusterIP).toMatch(/^10\./);
    expect(created.metadata?.creationTimestamp).toBeInstanceOf(Date);

    const list = await core.listNamespacedService({ namespace: 'app' });
    expect(list.items.map((s) => s.metadata?.name)).toEqual(['web']);
    expect(list.metadata?.resourceVersion).toBeTruthy();

    const replaced = await core.replaceNamespacedService({
      name: 'web',
      namespace: 'app',
      body: { ...created, metadata: { ...created.metadata, labels: { v: '2' } } },
    });
    expect(replaced.metadata?.labels).toEqual({ v: '2' });
    const stale = await apiError(
      core.replaceNamespacedService({
        name: 'web',
        namespace: 'app',
        body: { ...created, metadata: { ...created.metadata, labels: { v: '3' } } },
      }),
    );
    expect(stale.code).toBe(409);
    expect(stale.body.reason).toBe('Conflict');

    const patched = await core.patchNamespacedService(
      { name: 'web', namespace: 'app', body: { metadata: { annotations: { note: 'x' } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    expect(patched.metadata?.annotations).toEqual({ note: 'x' });
    expect(patched.metadata?.labels).toEqual({ v: '2' });

    const invalid = await apiError(
      core.createNamespacedService({ namespace: 'app', body: service('Bad_Name') }),
    );
    expect(invalid.code).toBe(422);
    expect(invalid.body.reason).toBe('Invalid');
    const exists = await apiError(core.createNamespacedService({ namespace: 'app', body: service('web') }));
    expect(exists.code).toBe(409);
    expect(exists.body.reason).toBe('AlreadyExists');

    await core.deleteNamespacedService({ name: 'web', namespace: 'app' });
    const gone = await apiError(core.readNamespacedService({ name: 'web', namespace: 'app' }));
    expect(gone.code).toBe(404);
  });

  it('401 and 403 surface as ApiException codes', async () => {
    const sim = await start({
      tokens: [{ token: 'ro', user: 'reader', rules: [{ verbs: ['get', 'list'], resources: ['services'] }] }],
    });
    const anon = sim.kubeConfig('nope').makeApiClient(CoreV1Api);
    expect((await apiError(anon.listNamespacedService({ namespace: 'default' }))).code).toBe(401);
    const ro = sim.kubeConfig('ro').makeApiClient(CoreV1Api);
    expect((await ro.listNamespacedService({ namespace: 'default' })).items).toEqual([]);
    const denied = await apiError(ro.createNamespacedService({ namespace: 'default', body: service('x') }));
    expect(denied.code).toBe(403);
    expect(denied.body.message).toContain('User "reader" cannot create resource "services"');
  });

  it('Watch receives ADDED, MODIFIED and DELETED', async () => {
    const sim = await start();
    const kc = sim.kubeConfig();
    const core = kc.makeApiClient(CoreV1Api);
    const seen: string[] = [];
    let done: unknown = 'open';
    const req = await new Watch(kc).watch(
      '/api/v1/namespaces/default/services',
      { allowWatchBookmarks: true },
      // Bookmarks (every 50 ms here) may fall between the events; the events are what is checked.
      (type: string, obj: V1Service) => {
        if (type !== 'BOOKMARK') seen.push(`${type} ${obj.metadata?.name ?? ''}`);
      },
      (err: unknown) => (done = err),
    );
    await core.createNamespacedService({ namespace: 'default', body: service('w') });
    await core.patchNamespacedService(
      { name: 'w', namespace: 'default', body: { metadata: { labels: { a: 'b' } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await core.deleteNamespacedService({ name: 'w', namespace: 'default' });
    await waitUntil(() => seen.length >= 3);
    expect(seen).toEqual(['ADDED w', 'MODIFIED w', 'DELETED w']);
    req.abort();
    await waitUntil(() => done !== 'open');
  });

  it('Watch: a server-side timeout calls done(null); a dropped watch calls done(error)', async () => {
    const sim = await start();
    const kc = sim.kubeConfig();
    let done: unknown = 'open';
    await new Watch(kc).watch(
      '/api/v1/namespaces/default/services',
      { timeoutSeconds: 1 },
      () => {},
      (err: unknown) => (done = err),
    );
    await waitUntil(() => done !== 'open');
    expect(done).toBeNull();
    let dropped: unknown = 'open';
    await new Watch(kc).watch(
      '/api/v1/namespaces/default/services',
      {},
      () => {},
      (err: unknown) => (dropped = err),
    );
    sim.faults.dropWatches();
    await waitUntil(() => dropped !== 'open');
    expect(dropped).toBeInstanceOf(Error);
  });

  it('makeInformer lists, then watches from the list resourceVersion', async () => {
    const sim = await start();
    const kc = sim.kubeConfig();
    const core = kc.makeApiClient(CoreV1Api);
    await core.createNamespacedService({ namespace: 'default', body: service('pre', { app: 'x' }) });
    const informer = makeInformer(
      kc,
      '/api/v1/namespaces/default/services',
      () => core.listNamespacedService({ namespace: 'default', labelSelector: 'app=x' }),
      'app=x',
    );
    const events: string[] = [];
    informer.on('add', (o) => events.push(`add ${o.metadata?.name ?? ''}`));
    informer.on('update', (o) => events.push(`update ${o.metadata?.name ?? ''}`));
    informer.on('delete', (o) => events.push(`delete ${o.metadata?.name ?? ''}`));
    const errors: unknown[] = [];
    informer.on('error', (e) => errors.push(e));
    await informer.start();
    await waitUntil(() => events.length >= 1);
    await core.createNamespacedService({ namespace: 'default', body: service('live', { app: 'x' }) });
    await core.createNamespacedService({ namespace: 'default', body: service('ignored', { app: 'y' }) });
    await core.patchNamespacedService(
      { name: 'live', namespace: 'default', body: { spec: { ports: [{ name: 'http', port: 81 }] } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await core.deleteNamespacedService({ name: 'pre', namespace: 'default' });
    await waitUntil(() => events.length >= 4);
    expect(events).toEqual(['add pre', 'add live', 'update live', 'delete pre']);
    expect(informer.list('default').map((s) => s.metadata?.name)).toEqual(['live']);
    await informer.stop();
    expect(errors.filter((e) => !(e instanceof Error && e.name === 'AbortError'))).toEqual([]);
  });

  it('CoordinationV1Api: lease create and replace with optimistic concurrency', async () => {
    const sim = await start();
    const coord = sim.kubeConfig().makeApiClient(CoordinationV1Api);
    const now = new Date();
    // client-node serialises a Date with milliseconds, which a real server refuses for a
    // MicroTime (six digits, test/fidelity/crud.ts): our controller writes its own six-digit strings.
    const refused = await coord
      .createNamespacedLease({
        namespace: 'default',
        body: { metadata: { name: 'leader' }, spec: { holderIdentity: 'a', renewTime: now } },
      })
      .then(
        () => 'created',
        (err: unknown) => String(err),
      );
    expect(refused).toContain('HTTP-Code: 400');
    expect(refused).toContain('cannot parse');
    const micro = (d: Date) => d.toISOString().replace(/Z$/, '000Z') as unknown as Date;
    const lease = await coord.createNamespacedLease({
      namespace: 'default',
      body: {
        metadata: { name: 'leader' },
        spec: {
          holderIdentity: 'a',
          leaseDurationSeconds: 15,
          acquireTime: micro(now),
          renewTime: micro(now),
          leaseTransitions: 0,
        },
      },
    });
    // MicroTime comes back in the apiserver's six-digit form (client-node leaves it a string).
    expect(String(lease.spec?.renewTime)).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    const renewed = await coord.replaceNamespacedLease({
      name: 'leader',
      namespace: 'default',
      body: { ...lease, spec: { ...lease.spec, renewTime: micro(new Date(now.getTime() + 1000)) } },
    });
    expect(renewed.metadata?.resourceVersion).not.toBe(lease.metadata?.resourceVersion);
    const lost = await apiError(
      coord.replaceNamespacedLease({
        name: 'leader',
        namespace: 'default',
        body: { ...lease, spec: { ...lease.spec, holderIdentity: 'b' } },
      }),
    );
    expect(lost.code).toBe(409);
    const read = await coord.readNamespacedLease({ name: 'leader', namespace: 'default' });
    expect(read.spec?.holderIdentity).toBe('a');
  });

  it('KubernetesObjectApi resolves resources through discovery and applies server-side', async () => {
    const sim = await start();
    const client = KubernetesObjectApi.makeApiClient(sim.kubeConfig());
    const spec: V1Service = { ...service('applied'), metadata: { name: 'applied', namespace: 'default' } };
    const applied = await client.patch(
      spec,
      undefined,
      undefined,
      'endpoint-binder',
      true,
      PatchStrategy.ServerSideApply,
    );
    expect(applied.metadata?.name).toBe('applied');
    const read = await client.read<V1Service>({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'applied', namespace: 'default' },
    });
    expect(read.metadata?.uid).toBe(applied.metadata?.uid);
  });
});
