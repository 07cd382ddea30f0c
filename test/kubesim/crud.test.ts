import { describe, expect, it } from 'vitest';
import { api, createNs, createSvc, svc, useSim } from './helpers.js';

const start = useSim();
const SVC = '/api/v1/namespaces/default/services';

describe('kubesim CRUD semantics', () => {
  it('creates with server-set metadata and serves get', async () => {
    const sim = await start();
    const created = await api(sim, 'POST', SVC, svc('web', {}, { app: 'web' }));
    expect(created.status).toBe(201);
    const meta = created.body.metadata;
    expect(created.body.kind).toBe('Service');
    expect(created.body.apiVersion).toBe('v1');
    expect(meta.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(meta.creationTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    // A real Service has no metadata.generation (its strategy does not track one).
    expect(meta.generation).toBeUndefined();
    expect(meta.namespace).toBe('default');
    expect(created.body.spec).toMatchObject({
      type: 'ClusterIP',
      sessionAffinity: 'None',
      ports: [{ port: 80, targetPort: 80, protocol: 'TCP' }],
    });
    const got = await api(sim, 'GET', `${SVC}/web`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(created.body);
  });

  it('assigns increasing cluster-wide resourceVersions', async () => {
    const sim = await start();
    const a = await createSvc(sim, 'default', 'a');
    await createNs(sim, 'other');
    const b = await createSvc(sim, 'other', 'b');
    expect(Number(b.metadata.resourceVersion)).toBeGreaterThan(Number(a.metadata.resourceVersion) + 1);
  });

  it('generateName appends a random suffix', async () => {
    const sim = await start();
    const r = await api(sim, 'POST', SVC, {
      metadata: { generateName: 'gen-' },
      spec: { ports: [{ port: 1 }] },
    });
    expect(r.status).toBe(201);
    expect(r.body.metadata.name).toMatch(/^gen-[a-z0-9]{5}$/);
  });

  it('409 AlreadyExists with the real Status body', async () => {
    const sim = await start();
    await createSvc(sim, 'default', 'dup');
    const r = await api(sim, 'POST', SVC, svc('dup'));
    expect(r.status).toBe(409);
    expect(r.body).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'services "dup" already exists',
      reason: 'AlreadyExists',
      details: { name: 'dup', kind: 'services' },
      code: 409,
    });
  });

  it('404 NotFound for a missing object and for a missing namespace on create', async () => {
    const sim = await start();
    const get = await api(sim, 'GET', `${SVC}/nope`);
    expect(get.status).toBe(404);
    expect(get.body).toMatchObject({
      reason: 'NotFound',
      message: 'services "nope" not found',
      details: { name: 'nope', kind: 'services' },
    });
    const create = await api(sim, 'POST', '/api/v1/namespaces/ghost/services', svc('x'));
    expect(create.status).toBe(404);
    expect(create.body).toMatchObject({
      reason: 'NotFound',
      message: 'namespaces "ghost" not found',
      details: { name: 'ghost', kind: 'namespaces' },
    });
    const lease = await api(sim, 'GET', '/apis/coordination.k8s.io/v1/namespaces/default/leases/l');
    expect(lease.body).toMatchObject({
      message: 'leases.coordination.k8s.io "l" not found',
      details: { group: 'coordination.k8s.io', kind: 'leases' },
    });
  });

  it('unknown paths answer the generic 404 and unsupported methods 405', async () => {
    const sim = await start();
    const r = await api(sim, 'GET', '/api/v1/namespaces/default/pods');
    expect(r.status).toBe(404);
    expect(r.body).toMatchObject({
      reason: 'NotFound',
      message: 'the server could not find the requested resource',
    });
    const m = await api(sim, 'POST', `${SVC}/x`, svc('x'));
    expect(m.status).toBe(405);
    expect(m.body.reason).toBe('MethodNotAllowed');
  });

  it('PUT: a Service without resourceVersion is an unconditional update, a stale one is 409', async () => {
    const sim = await start();
    const created = await createSvc(sim, 'default', 'u');
    const noRv = await api(sim, 'PUT', `${SVC}/u`, svc('u', { ports: [{ port: 82 }] }));
    expect(noRv.status).toBe(200);
    expect(noRv.body.spec.ports[0].port).toBe(82);
    expect(noRv.body.spec.clusterIP).toBe(created.spec.clusterIP);

    const body = { ...noRv.body, spec: { ...noRv.body.spec, ports: [{ port: 81 }] } };
    const ok = await api(sim, 'PUT', `${SVC}/u`, body);
    expect(ok.status).toBe(200);
    expect(ok.body.metadata.generation).toBeUndefined();
    expect(ok.body.spec.clusterIP).toBe(created.spec.clusterIP);

    const stale = await api(sim, 'PUT', `${SVC}/u`, body);
    expect(stale.status).toBe(409);
    expect(stale.body).toMatchObject({
      reason: 'Conflict',
      message:
        'Operation cannot be fulfilled on services "u": the object has been modified; please apply your changes to the latest version and try again',
      details: { name: 'u', kind: 'services' },
    });
  });

  it('an update that changes nothing keeps the resourceVersion', async () => {
    const sim = await start();
    const created = await createSvc(sim, 'default', 'same');
    const r = await api(sim, 'PUT', `${SVC}/same`, created);
    expect(r.status).toBe(200);
    expect(r.body.metadata.resourceVersion).toBe(created.metadata.resourceVersion);
  });

  it('PUT: creates a missing service (whatever RV it carries), 400 on a name mismatch', async () => {
    const sim = await start();
    const missing = await api(sim, 'PUT', `${SVC}/ghost`, {
      ...svc('ghost'),
      metadata: { name: 'ghost', resourceVersion: '5' },
    });
    expect(missing.status).toBe(201);
    expect(missing.body.metadata.resourceVersion).not.toBe('5');
    await createSvc(sim, 'default', 'a');
    const mismatch = await api(sim, 'PUT', `${SVC}/a`, svc('b'));
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.message).toBe('the name of the object (b) does not match the name on the URL (a)');
  });

  it('400 when the body namespace differs from the URL, and on malformed JSON or wrong types', async () => {
    const sim = await start();
    const ns = await api(sim, 'POST', SVC, {
      ...svc('x'),
      metadata: { name: 'x', namespace: 'kube-system' },
    });
    expect(ns.status).toBe(400);
    expect(ns.body.message).toBe(
      'the namespace of the provided object does not match the namespace sent on the request',
    );
    const bad = await api(sim, 'POST', SVC, '{not json');
    expect(bad.status).toBe(400);
    expect(bad.body.reason).toBe('BadRequest');
    const types = await api(sim, 'POST', SVC, {
      metadata: { name: 'x' },
      spec: { ports: [{ port: 'eighty' }] },
    });
    expect(types.status).toBe(400);
    expect(types.body.message).toContain('Service in version "v1" cannot be handled as a Service');
  });

  it('merge patch (and strategic treated as merge), with a stale RV in the body → 409', async () => {
    const sim = await start();
    const created = await createSvc(sim, 'default', 'p');
    const merge = await api(
      sim,
      'PATCH',
      `${SVC}/p`,
      { metadata: { labels: { a: 'b' } } },
      { contentType: 'application/merge-patch+json' },
    );
    expect(merge.status).toBe(200);
    expect(merge.body.metadata.labels).toEqual({ a: 'b' });
    const strategic = await api(
      sim,
      'PATCH',
      `${SVC}/p`,
      { metadata: { labels: { a: null, c: 'd' } } },
      { contentType: 'application/strategic-merge-patch+json' },
    );
    expect(strategic.body.metadata.labels).toEqual({ c: 'd' });
    const stale = await api(
      sim,
      'PATCH',
      `${SVC}/p`,
      { metadata: { resourceVersion: created.metadata.resourceVersion, labels: { x: 'y' } } },
      { contentType: 'application/merge-patch+json' },
    );
    expect(stale.status).toBe(409);
    expect(stale.body.reason).toBe('Conflict');
  });

  it('JSON patch (RFC 6902), and 415 for an unknown patch type', async () => {
    const sim = await start();
    await createSvc(sim, 'default', 'j');
    const r = await api(
      sim,
      'PATCH',
      `${SVC}/j`,
      [
        { op: 'add', path: '/metadata/labels', value: { k: 'v' } },
        { op: 'replace', path: '/spec/ports/0/port', value: 8080 },
        { op: 'test', path: '/metadata/name', value: 'j' },
      ],
      { contentType: 'application/json-patch+json' },
    );
    expect(r.status).toBe(200);
    expect(r.body.metadata.labels).toEqual({ k: 'v' });
    expect(r.body.spec.ports[0].port).toBe(8080);
    const failed = await api(
      sim,
      'PATCH',
      `${SVC}/j`,
      [{ op: 'test', path: '/metadata/name', value: 'zz' }],
      {
        contentType: 'application/json-patch+json',
      },
    );
    expect(failed.status).toBe(422);
    const wrong = await api(sim, 'PATCH', `${SVC}/j`, { a: 1 }, { contentType: 'application/json' });
    expect(wrong.status).toBe(415);
    expect(wrong.body.reason).toBe('UnsupportedMediaType');
    expect(wrong.body.message).toContain(
      'accepted media types include: application/json-patch+json, application/merge-patch+json',
    );
  });

  it('patching a missing object is 404; server-side apply creates it and requires fieldManager', async () => {
    const sim = await start();
    const missing = await api(
      sim,
      'PATCH',
      `${SVC}/m`,
      { metadata: { labels: { a: 'b' } } },
      { contentType: 'application/merge-patch+json' },
    );
    expect(missing.status).toBe(404);
    const noManager = await api(sim, 'PATCH', `${SVC}/m`, svc('m'), {
      contentType: 'application/apply-patch+yaml',
    });
    expect(noManager.status).toBe(422);
    const applied = await api(sim, 'PATCH', `${SVC}/m?fieldManager=test&force=true`, svc('m'), {
      contentType: 'application/apply-patch+yaml',
    });
    expect(applied.status).toBe(201);
    const again = await api(sim, 'PATCH', `${SVC}/m?fieldManager=test&force=true`, svc('m', {}, { a: 'b' }), {
      contentType: 'application/apply-patch+yaml',
    });
    expect(again.status).toBe(200);
    expect(again.body.metadata.labels).toEqual({ a: 'b' });
    expect(again.body.spec.clusterIP).toBe(applied.body.spec.clusterIP);
  });

  it('delete returns the Service, a Status for leases, honours preconditions, and 404s afterwards', async () => {
    const sim = await start();
    const created = await createSvc(sim, 'default', 'd');
    const pre = await api(sim, 'DELETE', `${SVC}/d`, { preconditions: { resourceVersion: '1' } });
    expect(pre.status).toBe(409);
    expect(pre.body.message).toBe(
      `Operation cannot be fulfilled on Service "d": the ResourceVersion in the precondition (1) does not match the ResourceVersion in record (${created.metadata.resourceVersion}). The object might have been modified`,
    );
    const del = await api(sim, 'DELETE', `${SVC}/d`);
    expect(del.status).toBe(200);
    expect(del.body.kind).toBe('Service');
    expect(del.body.metadata.uid).toBe(created.metadata.uid);
    expect((await api(sim, 'GET', `${SVC}/d`)).status).toBe(404);
    expect((await api(sim, 'DELETE', `${SVC}/d`)).status).toBe(404);

    const L = '/apis/coordination.k8s.io/v1/namespaces/default/leases';
    const lease = await api(sim, 'POST', L, { metadata: { name: 'l' }, spec: { holderIdentity: 'me' } });
    const dl = await api(sim, 'DELETE', `${L}/l`);
    expect(dl.body).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Success',
      details: { name: 'l', group: 'coordination.k8s.io', kind: 'leases', uid: lease.body.metadata.uid },
    });
  });

  it('objects with finalizers get a deletionTimestamp and go when the last finalizer is removed', async () => {
    const sim = await start();
    const r = await api(sim, 'POST', SVC, {
      ...svc('f'),
      metadata: { name: 'f', finalizers: ['example.com/x'] },
    });
    expect(r.status).toBe(201);
    const del = await api(sim, 'DELETE', `${SVC}/f`);
    expect(del.body.metadata.deletionTimestamp).toBeTruthy();
    expect((await api(sim, 'GET', `${SVC}/f`)).status).toBe(200);
    const patched = await api(
      sim,
      'PATCH',
      `${SVC}/f`,
      { metadata: { finalizers: null } },
      { contentType: 'application/merge-patch+json' },
    );
    expect(patched.status).toBe(200);
    expect((await api(sim, 'GET', `${SVC}/f`)).status).toBe(404);
  });

  it('leases: full CRUD, optimistic concurrency on stale RV', async () => {
    const sim = await start();
    const L = '/apis/coordination.k8s.io/v1/namespaces/default/leases';
    const c = await api(sim, 'POST', L, {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'leader' },
      spec: { holderIdentity: 'a', leaseDurationSeconds: 15, renewTime: '2024-01-01T00:00:00.123000Z' },
    });
    expect(c.status).toBe(201);
    expect(c.body.spec.renewTime).toBe('2024-01-01T00:00:00.123000Z');
    expect(c.body.metadata.generation).toBeUndefined();
    const list = await api(sim, 'GET', L);
    expect(list.body.kind).toBe('LeaseList');
    expect(list.body.apiVersion).toBe('coordination.k8s.io/v1');
    expect(list.body.items).toHaveLength(1);
    const update = await api(sim, 'PUT', `${L}/leader`, {
      metadata: { name: 'leader', resourceVersion: c.body.metadata.resourceVersion },
      spec: { holderIdentity: 'b' },
    });
    expect(update.status).toBe(200);
    const stale = await api(sim, 'PUT', `${L}/leader`, { ...c.body, spec: { holderIdentity: 'c' } });
    expect(stale.status).toBe(409);
    expect(stale.body.message).toContain(
      'Operation cannot be fulfilled on leases.coordination.k8s.io "leader"',
    );
    const patch = await api(
      sim,
      'PATCH',
      `${L}/leader`,
      { spec: { holderIdentity: 'd' } },
      { contentType: 'application/merge-patch+json' },
    );
    expect(patch.body.spec.holderIdentity).toBe('d');
  });

  it('events: core/v1 and events.k8s.io/v1 create, get, list, patch', async () => {
    const sim = await start();
    const E = '/api/v1/namespaces/default/events';
    const c = await api(sim, 'POST', E, {
      metadata: { name: 'e1' },
      involvedObject: { kind: 'Service', namespace: 'default', name: 'x' },
      reason: 'Created',
      message: 'hello',
      type: 'Normal',
      count: 1,
    });
    expect(c.status).toBe(201);
    const p = await api(
      sim,
      'PATCH',
      `${E}/e1`,
      { count: 2 },
      { contentType: 'application/strategic-merge-patch+json' },
    );
    expect(p.body.count).toBe(2);
    expect((await api(sim, 'GET', `${E}/e1`)).body.count).toBe(2);
    expect((await api(sim, 'GET', E)).body.items).toHaveLength(1);

    const E2 = '/apis/events.k8s.io/v1/namespaces/default/events';
    // Without eventTime only that is reported (the reporting fields are checked once it is set).
    const bad = await api(sim, 'POST', E2, { metadata: { name: 'e2' }, type: 'Normal' });
    expect(bad.status).toBe(422);
    expect(bad.body.details.causes.map((c: { field: string }) => c.field)).toEqual(['eventTime']);
    const ok = await api(sim, 'POST', E2, {
      metadata: { name: 'e2' },
      eventTime: '2024-01-01T00:00:00.000000Z',
      type: 'Normal',
      reason: 'Synced',
      action: 'Sync',
      note: 'ok',
      reportingController: 'example.com/ctl',
      reportingInstance: 'ctl-1',
      regarding: { kind: 'Service', namespace: 'default', name: 'x' },
    });
    expect(ok.status).toBe(201);
    expect(ok.body.apiVersion).toBe('events.k8s.io/v1');
    const p2 = await api(
      sim,
      'PATCH',
      `${E2}/e2`,
      { note: 'again' },
      { contentType: 'application/merge-patch+json' },
    );
    expect(p2.body.note).toBe('again');
  });

  it('serves discovery and /version', async () => {
    const sim = await start();
    const core = await api(sim, 'GET', '/api');
    expect(core.body).toMatchObject({ kind: 'APIVersions', versions: ['v1'] });
    const v1 = await api(sim, 'GET', '/api/v1');
    expect(v1.body.kind).toBe('APIResourceList');
    expect(v1.body.resources.map((r: { name: string }) => r.name)).toEqual([
      'namespaces',
      'services',
      'events',
      'serviceaccounts',
      'secrets',
      'configmaps',
    ]);
    const groups = await api(sim, 'GET', '/apis');
    expect(groups.body.groups.map((g: { name: string }) => g.name)).toEqual([
      'coordination.k8s.io',
      'events.k8s.io',
      'rbac.authorization.k8s.io',
      'apps',
      'batch',
      'policy',
      'networking.k8s.io',
      'admissionregistration.k8s.io',
      'authorization.k8s.io',
      'authentication.k8s.io',
    ]);
    const batch = await api(sim, 'GET', '/apis/batch/v1');
    expect(batch.body.resources.map((r: { name: string }) => r.name)).toEqual(['jobs', 'jobs/status']);
    const coord = await api(sim, 'GET', '/apis/coordination.k8s.io/v1');
    expect(coord.body).toMatchObject({
      groupVersion: 'coordination.k8s.io/v1',
      resources: [{ name: 'leases', kind: 'Lease', namespaced: true }],
    });
    expect((await api(sim, 'GET', '/apis/events.k8s.io/v1')).body.resources[0].name).toBe('events');
    expect((await api(sim, 'GET', '/apis/coordination.k8s.io')).body.kind).toBe('APIGroup');
    const version = await api(sim, 'GET', '/version', undefined, { token: null });
    expect(version.body).toMatchObject({ major: '1', minor: '34' });
  });
});
