import { describe, expect, it } from 'vitest';
import { ownershipLabels } from '../../src/binding/ownership/index.js';
import { plan } from '../../src/binding/plan.js';
import type { PlanAction } from '../../src/binding/types.js';
import { applyAction, applyAll, type ApplyContext } from '../../src/controller/apply.js';
import { KubeApiError } from '../../src/kube/errors.js';
import type { Service } from '../../src/kube/objects.js';
import { FakeServiceApi } from './fake-service-api.js';

const identity = { release: 'r', operatorNamespace: 'ops' };

function svc(
  name: string,
  opts: { ns?: string; port?: number; type?: string; labels?: Record<string, string> } = {},
): Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name,
      namespace: opts.ns ?? 'ops',
      labels: opts.labels ?? { ...ownershipLabels(identity), 'endpoint-binder.io/role': 'internal' },
    },
    spec:
      opts.type === 'ExternalName'
        ? {
            type: 'ExternalName',
            externalName: 'x.ops.svc.cluster.local',
            ports: [{ name: 'http-80', protocol: 'TCP', port: 80, targetPort: 80 }],
          }
        : {
            type: 'ClusterIP',
            selector: { app: 'forwarder' },
            ports: [{ name: 'http-80', protocol: 'TCP', port: 80, targetPort: opts.port ?? 10000 }],
          },
  };
}

const foreign = (name: string, ns = 'ops') => svc(name, { ns, labels: { team: 'other' } });

/** The one action the plan makes for `desired` against what the API holds now. */
function actionFor(api: FakeServiceApi, desired: Service | undefined, key = 'ops/a'): PlanAction {
  const live = api.read(key);
  const actions = plan(
    desired ? new Map([[key, desired]]) : new Map(),
    live ? new Map([[key, live]]) : new Map(),
    {
      allowDeletes: true,
      frozenNamespaces: new Set(),
    },
  );
  expect(actions).toHaveLength(1);
  return actions[0]!;
}

function ctx(api: FakeServiceApi, leader: () => boolean = () => true): ApplyContext & { writes: string[] } {
  const writes: string[] = [];
  return { api, identity, isLeader: leader, onWrite: (op, result) => writes.push(`${op}:${result}`), writes };
}

describe('apply: what becomes of one planned write', () => {
  it('create on a free name: created, one request', async () => {
    const api = new FakeServiceApi();
    const c = ctx(api);
    const out = await applyAction(actionFor(api, svc('a')), c);
    expect(out.result).toBe('created');
    expect(out.result === 'created' && out.object.metadata.uid).toBeTruthy();
    expect(api.requests).toEqual(['create ops/a']);
    expect(c.writes).toEqual(['create:ok']);
  });

  it('create on a name held by a foreign Service: foreign, the holder untouched', async () => {
    const api = new FakeServiceApi();
    const action = actionFor(api, svc('a'));
    const held = api.put(foreign('a'));
    const c = ctx(api);
    const out = await applyAction(action, c);
    expect(out.result).toBe('foreign');
    expect(api.requests).toEqual(['create ops/a', 'get ops/a']);
    expect(api.read('ops/a')).toEqual(held);
    expect(c.writes).toEqual(['create:already_exists']);
  });

  it('create on a name already holding ours (the cache lagged): our fields written over it, reported created', async () => {
    const api = new FakeServiceApi();
    const action = actionFor(api, svc('a', { port: 10001 }));
    const ours = api.put(svc('a', { port: 10000 }));
    const out = await applyAction(action, ctx(api));
    expect(out.result).toBe('created');
    expect(api.requests).toEqual(['create ops/a', 'get ops/a', 'replace ops/a']);
    const now = api.read('ops/a')!;
    expect(now.spec?.ports?.[0]?.targetPort).toBe(10001);
    expect(now.metadata.uid).toBe(ours.metadata.uid);
    expect(now.spec?.clusterIP).toBe(ours.spec?.clusterIP);
  });

  it('create racing a delete (AlreadyExists, then gone when read): created on the second try', async () => {
    const api = new FakeServiceApi();
    const action = actionFor(api, svc('a'));
    api.put(foreign('a'));
    api.before = (verb, key) => {
      if (verb === 'get') api.remove(key);
    };
    const out = await applyAction(action, ctx(api));
    expect(out.result).toBe('created');
    expect(api.requests).toEqual(['create ops/a', 'get ops/a', 'create ops/a']);
  });

  it('update with a stale resourceVersion: 409, re-read, updated; a foreign label set meanwhile is kept', async () => {
    const api = new FakeServiceApi();
    api.put(svc('a', { port: 10000 }));
    const action = actionFor(api, svc('a', { port: 10001 }));
    let raced = false;
    api.before = (verb, key) => {
      if (verb === 'replace' && !raced) {
        raced = true;
        const live = api.read(key)!;
        api.put({
          ...live,
          metadata: { ...live.metadata, labels: { ...live.metadata.labels, team: 'net' } },
        });
      }
    };
    const c = ctx(api);
    const out = await applyAction(action, c);
    expect(out.result).toBe('updated');
    expect(api.requests).toEqual(['replace ops/a', 'get ops/a', 'replace ops/a']);
    expect(c.writes).toEqual(['update:conflict', 'update:ok']);
    expect(api.read('ops/a')?.metadata.labels?.['team']).toBe('net');
    expect(api.read('ops/a')?.spec?.ports?.[0]?.targetPort).toBe(10001);
  });

  it('update that conflicts every time: conflict after four attempts, nothing half-written', async () => {
    const api = new FakeServiceApi();
    api.put(svc('a', { port: 10000 }));
    const action = actionFor(api, svc('a', { port: 10001 }));
    api.before = (verb, key) => {
      if (verb === 'replace') api.put(api.read(key)!);
    };
    const out = await applyAction(action, ctx(api));
    expect(out).toMatchObject({ result: 'conflict', message: expect.stringMatching(/kept changing/) });
    expect(api.requests.filter((r) => r.startsWith('replace'))).toHaveLength(4);
    expect(api.read('ops/a')?.spec?.ports?.[0]?.targetPort).toBe(10000);
  });

  it('update of a Service deleted meanwhile (404): created again', async () => {
    const api = new FakeServiceApi();
    api.put(svc('a', { port: 10000 }));
    const action = actionFor(api, svc('a', { port: 10001 }));
    api.remove('ops/a');
    const out = await applyAction(action, ctx(api));
    expect(out.result).toBe('created');
    expect(api.requests).toEqual(['replace ops/a', 'create ops/a']);
  });

  it('update whose re-read finds the name taken over by a foreign Service: foreign, untouched', async () => {
    const api = new FakeServiceApi();
    api.put(svc('a', { port: 10000 }));
    const action = actionFor(api, svc('a', { port: 10001 }));
    api.before = (verb) => {
      if (verb === 'replace') {
        api.before = undefined;
        api.remove('ops/a');
        api.put(foreign('a'));
      }
    };
    const out = await applyAction(action, ctx(api));
    expect(out.result).toBe('foreign');
    expect(api.read('ops/a')?.metadata.labels).toEqual({ team: 'other' });
  });

  it('delete carries the uid: deleted; an object re-created under the name meanwhile is a conflict and stays', async () => {
    const api = new FakeServiceApi();
    api.put(svc('a'));
    const del = actionFor(api, undefined);
    expect(await applyAction(del, ctx(api))).toMatchObject({ result: 'deleted' });
    expect(api.read('ops/a')).toBeUndefined();

    api.put(svc('b'));
    const stale = actionFor(api, undefined, 'ops/b');
    api.remove('ops/b');
    const again = api.put(svc('b'));
    const out = await applyAction(stale, ctx(api));
    expect(out).toMatchObject({
      result: 'conflict',
      message: expect.stringMatching(/replaced by another object/),
    });
    expect(api.read('ops/b')?.metadata.uid).toBe(again.metadata.uid);
  });

  it('a changed type is recreated: delete with the uid, then create', async () => {
    const api = new FakeServiceApi();
    const old = api.put(svc('a', { type: 'ExternalName' }));
    const action = actionFor(api, svc('a'));
    expect(action.op).toBe('recreate');
    const out = await applyAction(action, ctx(api));
    expect(out.result).toBe('created');
    expect(api.requests).toEqual(['delete ops/a', 'create ops/a']);
    expect(api.read('ops/a')?.metadata.uid).not.toBe(old.metadata.uid);
  });

  it.each([
    ['create', 'forbidden', 403, /cannot create resource "services"/],
    ['create', 'internal', 500, /etcdserver/],
    ['replace', 'forbidden', 403, /cannot update resource "services"/],
    ['replace', 'internal', 500, /etcdserver/],
    ['delete', 'internal', 500, /etcdserver/],
  ] as const)('%s answered %s: failed with the API server message', async (verb, failure, code, msg) => {
    const api = new FakeServiceApi();
    if (verb !== 'create') api.put(svc('a', { port: 10000 }));
    const action = actionFor(api, verb === 'delete' ? undefined : svc('a', { port: 10001 }));
    api.failNext(verb, failure);
    const c = ctx(api);
    const out = await applyAction(action, c);
    expect(out.result).toBe('failed');
    if (out.result !== 'failed') return;
    expect(out.message).toMatch(msg);
    expect(out.error).toBeInstanceOf(KubeApiError);
    expect((out.error as KubeApiError).code).toBe(code);
    expect(c.writes).toEqual([
      `${verb === 'replace' ? 'update' : verb}:${failure === 'forbidden' ? 'forbidden' : 'error'}`,
    ]);
  });

  it('not the leader: skipped, no request at all', async () => {
    const api = new FakeServiceApi();
    api.put(svc('b'));
    const actions = [actionFor(api, svc('a')), actionFor(api, undefined, 'ops/b')];
    const outs = await applyAll(
      actions,
      ctx(api, () => false),
      4,
    );
    expect(outs.map((o) => o.result)).toEqual(['skipped', 'skipped']);
    expect(api.requests).toEqual([]);
  });

  it('leadership lost between the delete and the create of a recreate: skipped, the delete reported', async () => {
    const api = new FakeServiceApi();
    const old = api.put(svc('a', { type: 'ExternalName' }));
    const action = actionFor(api, svc('a'));
    let leader = true;
    api.before = (verb) => {
      if (verb === 'delete') leader = false;
    };
    const out = await applyAction(
      action,
      ctx(api, () => leader),
    );
    expect(out).toMatchObject({ result: 'skipped', deletedFirst: { metadata: { uid: old.metadata.uid } } });
    expect(api.requests).toEqual(['delete ops/a']);
  });

  it('applyAll keeps the outcomes in the order of the actions, with at most `concurrency` in flight', async () => {
    const api = new FakeServiceApi();
    const actions = ['a', 'b', 'c', 'd', 'e'].map((n) => actionFor(api, svc(n), `ops/${n}`));
    api.failNext('create', 'internal', 'ops/c');
    let inFlight = 0;
    let most = 0;
    const ctxSlow = ctx(api);
    ctxSlow.api = {
      get: (ns, n) => api.get(ns, n),
      replace: (s) => api.replace(s),
      delete: (ns, n, uid) => api.delete(ns, n, uid),
      create: async (s) => {
        inFlight++;
        most = Math.max(most, inFlight);
        await new Promise((r) => setImmediate(r));
        inFlight--;
        return api.create(s);
      },
    };
    const outs = await applyAll(actions, ctxSlow, 2);
    expect(outs.map((o) => `${o.key}:${o.result}`)).toEqual([
      'ops/a:created',
      'ops/b:created',
      'ops/c:failed',
      'ops/d:created',
      'ops/e:created',
    ]);
    expect(most).toBe(2);
  });
});
