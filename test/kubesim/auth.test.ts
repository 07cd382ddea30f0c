import { describe, expect, it } from 'vitest';
import { api, createSvc, openWatch, svc, useSim } from './helpers.js';

const start = useSim();

describe('kubesim authentication and authorization', () => {
  it('401 without or with an unknown token; /version and /healthz are public', async () => {
    const sim = await start();
    const none = await api(sim, 'GET', '/api/v1/namespaces', undefined, { token: null });
    expect(none.status).toBe(401);
    expect(none.body).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'Unauthorized',
      reason: 'Unauthorized',
      code: 401,
    });
    expect((await api(sim, 'GET', '/api', undefined, { token: 'wrong' })).status).toBe(401);
    expect((await api(sim, 'GET', '/version', undefined, { token: null })).status).toBe(200);
    expect((await api(sim, 'GET', '/healthz', undefined, { token: null })).body).toBe('ok');
  });

  it('an explicit admin token (no rules) is used as adminToken', async () => {
    const sim = await start({ tokens: [{ token: 'root', user: 'root' }] });
    expect(sim.adminToken).toBe('root');
    expect((await api(sim, 'GET', '/api/v1/namespaces')).status).toBe(200);
  });

  it('per-token rules: 403 Forbidden with the RBAC wording', async () => {
    const sim = await start({
      tokens: [
        {
          token: 'op',
          user: 'system:serviceaccount:ops:binder',
          rules: [
            { verbs: ['get', 'list', 'watch'], resources: ['services'], namespaces: ['default'] },
            {
              verbs: ['get', 'update'],
              resources: ['leases'],
              apiGroups: ['coordination.k8s.io'],
              namespaces: ['ops'],
              resourceNames: ['leader'],
            },
            { verbs: ['*'], resources: ['events'] },
          ],
        },
      ],
    });
    await createSvc(sim, 'default', 'a');
    const t = { token: 'op' };
    expect((await api(sim, 'GET', '/api/v1/namespaces/default/services', undefined, t)).status).toBe(200);
    expect((await api(sim, 'GET', '/api/v1/namespaces/default/services/a', undefined, t)).status).toBe(200);

    const list = await api(sim, 'GET', '/api/v1/namespaces/kube-system/services', undefined, t);
    expect(list.status).toBe(403);
    expect(list.body).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message:
        'services is forbidden: User "system:serviceaccount:ops:binder" cannot list resource "services" in API group "" in the namespace "kube-system"',
      reason: 'Forbidden',
      details: { kind: 'services' },
      code: 403,
    });
    const cluster = await api(sim, 'GET', '/api/v1/services', undefined, t);
    expect(cluster.body.message).toBe(
      'services is forbidden: User "system:serviceaccount:ops:binder" cannot list resource "services" in API group "" at the cluster scope',
    );
    const create = await api(sim, 'POST', '/api/v1/namespaces/default/services', svc('b'), t);
    expect(create.status).toBe(403);
    expect(create.body.message).toContain('cannot create resource "services"');
    const del = await api(sim, 'DELETE', '/api/v1/namespaces/default/services/a', undefined, t);
    expect(del.body.message).toBe(
      'services "a" is forbidden: User "system:serviceaccount:ops:binder" cannot delete resource "services" in API group "" in the namespace "default"',
    );
    expect(del.body.details).toEqual({ name: 'a', kind: 'services' });

    const lease = await api(
      sim,
      'GET',
      '/apis/coordination.k8s.io/v1/namespaces/ops/leases/other',
      undefined,
      t,
    );
    expect(lease.status).toBe(403);
    expect(lease.body.message).toBe(
      'leases.coordination.k8s.io "other" is forbidden: User "system:serviceaccount:ops:binder" cannot get resource "leases" in API group "coordination.k8s.io" in the namespace "ops"',
    );
    expect(lease.body.details).toEqual({ name: 'other', group: 'coordination.k8s.io', kind: 'leases' });
    // Named rule matches the named lease (404 because it does not exist, not 403).
    expect(
      (await api(sim, 'GET', '/apis/coordination.k8s.io/v1/namespaces/ops/leases/leader', undefined, t))
        .status,
    ).toBe(404);
    expect((await api(sim, 'GET', '/api/v1/namespaces/kube-system/events', undefined, t)).status).toBe(200);

    const watchDenied = await api(
      sim,
      'GET',
      '/api/v1/namespaces/kube-system/services?watch=true',
      undefined,
      t,
    );
    expect(watchDenied.status).toBe(403);
    expect(watchDenied.body.message).toContain('cannot watch resource "services"');
    const w = await openWatch(sim, '/api/v1/namespaces/default/services?watch=true', 'op');
    expect(w.status).toBe(200);
    w.close();
  });
});
