import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import type { Kubesim } from '../../src/kubesim/index.js';
import { api, createNs, openWatch, useSim, type Loose } from './helpers.js';

/**
 * Impersonation (Impersonate-User/-Group/-Uid/-Extra-*), the self reviews answered from stored
 * RBAC (SelfSubjectAccessReview, SelfSubjectRulesReview, SelfSubjectReview), and RBAC
 * resourceNames on a list or watch of one object by field selector.
 */

const start = useSim();
const RBAC = '/apis/rbac.authorization.k8s.io/v1';

/** One request with repeated headers (fetch would fold them into one). */
function raw(
  sim: Kubesim,
  method: string,
  path: string,
  headers: Record<string, string | string[]>,
  body?: unknown,
  token = sim.adminToken,
): Promise<{ status: number; type: string; body: Loose }> {
  return new Promise((resolve, reject) => {
    const req = request(
      new URL(sim.url + path),
      {
        method,
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', ...headers },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => {
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            // plain text
          }
          resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), body: parsed });
        });
      },
    );
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

async function bind(
  sim: Kubesim,
  name: string,
  rules: unknown[],
  subject: Record<string, string>,
  ns?: string,
) {
  const scope = ns ? `${RBAC}/namespaces/${ns}` : RBAC;
  const kind = ns ? 'Role' : 'ClusterRole';
  const r1 = await api(sim, 'POST', `${scope}/${ns ? 'roles' : 'clusterroles'}`, {
    metadata: { name },
    rules,
  });
  const r2 = await api(sim, 'POST', `${scope}/${ns ? 'rolebindings' : 'clusterrolebindings'}`, {
    metadata: { name },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind, name },
    subjects: [
      { apiGroup: subject['kind'] === 'ServiceAccount' ? '' : 'rbac.authorization.k8s.io', ...subject },
    ],
  });
  if (r1.status !== 201 || r2.status !== 201) throw new Error(`rbac: ${JSON.stringify([r1.body, r2.body])}`);
}

const whoami = (sim: Kubesim, headers: Record<string, string | string[]>, token?: string) =>
  raw(
    sim,
    'POST',
    '/apis/authentication.k8s.io/v1/selfsubjectreviews',
    headers,
    {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'SelfSubjectReview',
    },
    token,
  );

describe('impersonation', () => {
  it('runs the request as the impersonated user with the groups a real server gives', async () => {
    const sim = await start();
    const user = await whoami(sim, { 'Impersonate-User': 'jane' });
    expect(user.status).toBe(201);
    expect(user.body).toEqual({
      kind: 'SelfSubjectReview',
      apiVersion: 'authentication.k8s.io/v1',
      metadata: { creationTimestamp: null },
      status: { userInfo: { username: 'jane', groups: ['system:authenticated'] } },
    });
    const sa = await whoami(sim, { 'Impersonate-User': 'system:serviceaccount:ops:bot' });
    expect(sa.body.status.userInfo).toEqual({
      username: 'system:serviceaccount:ops:bot',
      groups: ['system:serviceaccounts', 'system:serviceaccounts:ops', 'system:authenticated'],
    });
    // Groups given are the whole list (system:authenticated added); uid and extras pass through.
    const full = await whoami(sim, {
      'Impersonate-User': 'jane',
      'Impersonate-Group': ['devs', 'ops'],
      'Impersonate-Uid': 'u-1',
      'Impersonate-Extra-Scopes': ['view', 'edit'],
      'Impersonate-Extra-Acme.com%2fproject': 'x',
    });
    expect(full.body.status.userInfo).toEqual({
      username: 'jane',
      uid: 'u-1',
      groups: ['devs', 'ops', 'system:authenticated'],
      extra: { scopes: ['view', 'edit'], 'acme.com/project': ['x'] },
    });
    // system:anonymous gets system:unauthenticated instead, so not even the self review (system:basic-user).
    const anon = await whoami(sim, { 'Impersonate-User': 'system:anonymous' });
    expect(anon.status).toBe(403);
    expect(anon.body.message).toBe(
      'selfsubjectreviews.authentication.k8s.io is forbidden: User "system:anonymous" cannot create resource "selfsubjectreviews" in API group "authentication.k8s.io" at the cluster scope',
    );
  });

  it('is authorized with the impersonate verb, denied with the real 403 wording', async () => {
    const sim = await start();
    await createNs(sim, 'ops');
    await api(sim, 'POST', '/api/v1/namespaces/ops/serviceaccounts', { metadata: { name: 'alice' } });
    const alice = sim.serviceAccountToken('ops', 'alice');
    const denyUser = await whoami(sim, { 'Impersonate-User': 'bob' }, alice);
    expect(denyUser.status).toBe(403);
    expect(denyUser.body).toMatchObject({
      reason: 'Forbidden',
      message:
        'users "bob" is forbidden: User "system:serviceaccount:ops:alice" cannot impersonate resource "users" in API group "" at the cluster scope',
      details: { name: 'bob', kind: 'users' },
    });
    const denySa = await whoami(sim, { 'Impersonate-User': 'system:serviceaccount:ops:bot' }, alice);
    expect(denySa.body.message).toBe(
      'serviceaccounts "bot" is forbidden: User "system:serviceaccount:ops:alice" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "ops"',
    );
    // Allowed to impersonate one service account (namespace + name), users and one group, not uids.
    await bind(
      sim,
      'impersonator',
      [
        { apiGroups: [''], resources: ['serviceaccounts'], verbs: ['impersonate'], resourceNames: ['bot'] },
        { apiGroups: [''], resources: ['users'], verbs: ['impersonate'] },
        { apiGroups: [''], resources: ['groups'], verbs: ['impersonate'], resourceNames: ['devs'] },
      ],
      { kind: 'ServiceAccount', name: 'alice', namespace: 'ops' },
    );
    expect((await whoami(sim, { 'Impersonate-User': 'system:serviceaccount:ops:bot' }, alice)).status).toBe(
      201,
    );
    expect((await whoami(sim, { 'Impersonate-User': 'system:serviceaccount:ops:other' }, alice)).status).toBe(
      403,
    );
    expect(
      (await whoami(sim, { 'Impersonate-User': 'bob', 'Impersonate-Group': 'devs' }, alice)).status,
    ).toBe(201);
    const group = await whoami(sim, { 'Impersonate-User': 'bob', 'Impersonate-Group': 'admins' }, alice);
    expect(group.body.message).toBe(
      'groups "admins" is forbidden: User "system:serviceaccount:ops:alice" cannot impersonate resource "groups" in API group "" at the cluster scope',
    );
    const uid = await whoami(sim, { 'Impersonate-User': 'bob', 'Impersonate-Uid': 'u-1' }, alice);
    expect(uid.body.message).toBe(
      'uids.authentication.k8s.io "u-1" is forbidden: User "system:serviceaccount:ops:alice" cannot impersonate resource "uids" in API group "authentication.k8s.io" at the cluster scope',
    );
  });

  it("a group without a user is the filter's plain-text 500", async () => {
    const sim = await start();
    const r = await raw(sim, 'GET', '/api/v1/namespaces', { 'Impersonate-Group': 'devs' });
    expect(r.status).toBe(500);
    expect(r.type).toBe('text/plain; charset=utf-8');
    expect(r.body).toBe(
      'Internal Server Error: "/api/v1/namespaces": requested [{Group  devs    }] without impersonating a user\n',
    );
  });

  it('the impersonated user is authorized from stored RBAC; the audit shows both users', async () => {
    const sim = await start();
    await createNs(sim, 'apps');
    sim.clearAudit();
    const denied = await raw(sim, 'GET', '/api/v1/namespaces/apps/services', { 'Impersonate-User': 'jane' });
    expect(denied.status).toBe(403);
    expect(denied.body.message).toBe(
      'services is forbidden: User "jane" cannot list resource "services" in API group "" in the namespace "apps"',
    );
    await bind(
      sim,
      'reader',
      [{ apiGroups: [''], resources: ['services'], verbs: ['list'] }],
      { kind: 'User', name: 'jane' },
      'apps',
    );
    expect(
      (await raw(sim, 'GET', '/api/v1/namespaces/apps/services', { 'Impersonate-User': 'jane' })).status,
    ).toBe(200);
    // A group the user is impersonated into counts: system:masters is everything.
    const masters = await raw(sim, 'GET', '/api/v1/namespaces/default/services', {
      'Impersonate-User': 'jane',
      'Impersonate-Group': 'system:masters',
    });
    expect(masters.status).toBe(200);
    const records = sim
      .audit()
      .filter((r) => r.attrs.resource === 'services' || r.attrs.verb === 'impersonate');
    expect(records.slice(0, 2)).toEqual([
      {
        user: 'kubesim-admin',
        groups: ['system:masters', 'system:authenticated'],
        attrs: { verb: 'impersonate', group: '', resource: 'users', namespace: undefined, name: 'jane' },
        allowed: true,
      },
      {
        user: 'jane',
        groups: ['system:authenticated'],
        impersonator: 'kubesim-admin',
        attrs: { verb: 'list', group: '', resource: 'services', namespace: 'apps', name: undefined },
        allowed: false,
      },
    ]);
  });
});

describe('self reviews', () => {
  const ssar = (sim: Kubesim, spec: unknown, headers: Record<string, string> = {}, token?: string) =>
    raw(sim, 'POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', headers, { spec }, token);

  it('SelfSubjectAccessReview answers from RBAC, with the reason RBAC gives', async () => {
    const sim = await start();
    await createNs(sim, 'ops');
    await api(sim, 'POST', '/api/v1/namespaces/ops/serviceaccounts', { metadata: { name: 'bot' } });
    await bind(
      sim,
      'svc',
      [
        { apiGroups: [''], resources: ['services'], verbs: ['create', 'get'] },
        { apiGroups: ['apps'], resources: ['deployments/status'], verbs: ['update'], resourceNames: ['web'] },
      ],
      { kind: 'ServiceAccount', name: 'bot' },
      'ops',
    );
    const bot = { 'Impersonate-User': 'system:serviceaccount:ops:bot' };
    const yes = await ssar(
      sim,
      { resourceAttributes: { verb: 'create', resource: 'services', namespace: 'ops' } },
      bot,
    );
    expect(yes.status).toBe(201);
    expect(yes.body).toEqual({
      kind: 'SelfSubjectAccessReview',
      apiVersion: 'authorization.k8s.io/v1',
      metadata: { creationTimestamp: null },
      spec: { resourceAttributes: { verb: 'create', resource: 'services', namespace: 'ops' } },
      status: {
        allowed: true,
        reason: 'RBAC: allowed by RoleBinding "svc/ops" of Role "svc" to ServiceAccount "bot/ops"',
      },
    });
    const allowed = async (attrs: Record<string, string>) =>
      (await ssar(sim, { resourceAttributes: attrs }, bot)).body.status.allowed as boolean;
    expect(await allowed({ verb: 'create', resource: 'services', namespace: 'apps' })).toBe(false);
    expect(await allowed({ verb: 'create', resource: 'services' })).toBe(false);
    expect(await allowed({ verb: 'delete', resource: 'services', namespace: 'ops' })).toBe(false);
    expect(
      await allowed({
        verb: 'update',
        group: 'apps',
        resource: 'deployments',
        subresource: 'status',
        name: 'web',
        namespace: 'ops',
      }),
    ).toBe(true);
    expect(
      await allowed({
        verb: 'update',
        group: 'apps',
        resource: 'deployments',
        subresource: 'status',
        name: 'api',
        namespace: 'ops',
      }),
    ).toBe(false);
    expect(
      await allowed({
        verb: 'update',
        group: 'apps',
        resource: 'deployments',
        name: 'web',
        namespace: 'ops',
      }),
    ).toBe(false);
    // Non-resource URLs: discovery is open to every authenticated user (system:discovery).
    const nonRes = await ssar(sim, { nonResourceAttributes: { verb: 'get', path: '/apis/apps' } }, bot);
    expect(nonRes.body.status).toEqual({
      allowed: true,
      reason:
        'RBAC: allowed by ClusterRoleBinding "system:discovery" of ClusterRole "system:discovery" to Group "system:authenticated"',
    });
    const metrics = await ssar(sim, { nonResourceAttributes: { verb: 'get', path: '/metrics' } }, bot);
    expect(metrics.body.status).toEqual({ allowed: false });
    // The admin (system:masters) may do anything.
    expect(
      (await ssar(sim, { resourceAttributes: { verb: 'delete', resource: 'nodes' } })).body.status,
    ).toEqual({ allowed: true });
  });

  it('SelfSubjectAccessReview validation', async () => {
    const sim = await start();
    const none = await ssar(sim, {});
    expect(none.status).toBe(422);
    expect(none.body.message).toBe(
      // Sic: no kind, and null printed bare, as the real server answers (test/fidelity/rbac.ts).
      '.authorization.k8s.io "" is invalid: spec.resourceAttributes: Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified',
    );
    const named = await raw(
      sim,
      'POST',
      '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews',
      {},
      {
        metadata: { name: 'x' },
        spec: { nonResourceAttributes: { path: '/version', verb: 'get' } },
      },
    );
    expect(named.body.details.causes).toEqual([
      {
        reason: 'FieldValueInvalid',
        message: 'Invalid value: {"name":"x"}: must be empty',
        field: 'metadata',
      },
    ]);
    const get = await api(sim, 'GET', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews');
    expect(get.status).toBe(405);
  });

  it('SelfSubjectRulesReview lists the rules of a namespace, bootstrap policy included', async () => {
    const sim = await start();
    await createNs(sim, 'ops');
    await bind(
      sim,
      'leases',
      [
        {
          apiGroups: ['coordination.k8s.io'],
          resources: ['leases'],
          verbs: ['get'],
          resourceNames: ['lead'],
        },
      ],
      { kind: 'User', name: 'jane' },
      'ops',
    );
    const review = (ns?: string) =>
      raw(
        sim,
        'POST',
        '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews',
        { 'Impersonate-User': 'jane' },
        {
          spec: ns ? { namespace: ns } : {},
        },
      );
    const ops = await review('ops');
    expect(ops.status).toBe(201);
    expect(ops.body.status.incomplete).toBe(false);
    expect(ops.body.status.resourceRules).toContainEqual({
      verbs: ['get'],
      apiGroups: ['coordination.k8s.io'],
      resources: ['leases'],
      resourceNames: ['lead'],
    });
    expect(ops.body.status.resourceRules).toContainEqual({
      verbs: ['create'],
      apiGroups: ['authorization.k8s.io'],
      resources: ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'],
    });
    expect(ops.body.status.nonResourceRules).toContainEqual({
      verbs: ['get'],
      nonResourceURLs: expect.arrayContaining(['/version']),
    });
    const other = await review('default');
    expect(other.body.status.resourceRules.some((r: Loose) => r.resources.includes('leases'))).toBe(false);
    const missing = await review();
    expect(missing.status).toBe(400);
    expect(missing.body.message).toBe('no namespace on request');
  });
});

describe('RBAC resourceNames on list and watch', () => {
  it('a list or watch of one named object by field selector is authorized as that object', async () => {
    const sim = await start();
    await createNs(sim, 'ops');
    for (const name of ['settings', 'other'])
      await api(sim, 'POST', '/api/v1/namespaces/ops/configmaps', { metadata: { name }, data: { a: '1' } });
    await api(sim, 'POST', '/api/v1/namespaces/ops/serviceaccounts', { metadata: { name: 'op' } });
    await bind(
      sim,
      'one-cm',
      [
        {
          apiGroups: [''],
          resources: ['configmaps'],
          verbs: ['get', 'list', 'watch'],
          resourceNames: ['settings'],
        },
      ],
      { kind: 'ServiceAccount', name: 'op' },
      'ops',
    );
    const token = sim.serviceAccountToken('ops', 'op');
    const cms = '/api/v1/namespaces/ops/configmaps';
    const one = await api(sim, 'GET', `${cms}?fieldSelector=metadata.name%3Dsettings`, undefined, { token });
    expect(one.status).toBe(200);
    expect(one.body.items.map((i: Loose) => i.metadata.name)).toEqual(['settings']);
    const all = await api(sim, 'GET', cms, undefined, { token });
    expect(all.status).toBe(403);
    const otherOne = await api(sim, 'GET', `${cms}?fieldSelector=metadata.name%3Dother`, undefined, {
      token,
    });
    expect(otherOne.status).toBe(403);
    expect(otherOne.body.message).toBe(
      'configmaps "other" is forbidden: User "system:serviceaccount:ops:op" cannot list resource "configmaps" in API group "" in the namespace "ops"',
    );
    // `!=` names no object: refused.
    expect(
      (await api(sim, 'GET', `${cms}?fieldSelector=metadata.name!%3Dsettings`, undefined, { token })).status,
    ).toBe(403);
    const watch = await openWatch(sim, `${cms}?watch=true&fieldSelector=metadata.name%3Dsettings`, token);
    expect(watch.status).toBe(200);
    await watch.waitFor((evs) =>
      evs.some((e) => e.type === 'ADDED' && e.object.metadata.name === 'settings'),
    );
    watch.close();
    const watchAll = await openWatch(sim, `${cms}?watch=true`, token);
    expect(watchAll.status).toBe(403);
    watchAll.close();
  });
});
