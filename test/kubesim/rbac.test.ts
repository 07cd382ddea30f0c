import { describe, expect, it } from 'vitest';
import { api, createNs, useSim } from './helpers.js';

/**
 * ServiceAccount tokens and the RBAC authorizer over stored Roles, ClusterRoles and bindings,
 * with the real semantics: RoleBindings grant in their namespace only (also with a ClusterRole),
 * ClusterRoleBindings everywhere; resourceNames never match list, watch or create; subresources
 * are named `resource/subresource`.
 */

const RBAC = '/apis/rbac.authorization.k8s.io/v1';

describe('kubesim ServiceAccount tokens and RBAC', () => {
  const start = useSim();

  async function setup() {
    const sim = await start({ initialNamespaces: ['default', 'ops', 'apps'] });
    const sa = await api(sim, 'POST', '/api/v1/namespaces/ops/serviceaccounts', {
      metadata: { name: 'bot' },
    });
    expect(sa.status).toBe(201);
    const token = sim.serviceAccountToken('ops', 'bot');
    return { sim, token };
  }

  it('authenticates a ServiceAccount token and denies everything until a binding grants it', async () => {
    const { sim, token } = await setup();
    const denied = await api(sim, 'GET', '/api/v1/namespaces/apps/services', undefined, { token });
    expect(denied.status).toBe(403);
    expect(denied.body.message).toBe(
      'services is forbidden: User "system:serviceaccount:ops:bot" cannot list resource "services" in API group "" in the namespace "apps"',
    );
    const cluster = await api(sim, 'GET', '/api/v1/services', undefined, { token });
    expect(cluster.body.message).toContain('at the cluster scope');
    // Discovery and OpenAPI need only authentication.
    expect((await api(sim, 'GET', '/apis', undefined, { token })).status).toBe(200);
    expect((await api(sim, 'GET', '/api/v1/services', undefined, { token: 'nope' })).status).toBe(401);
    // Every decision is in the audit log.
    expect(sim.audit().some((r) => r.user === 'system:serviceaccount:ops:bot' && !r.allowed)).toBe(true);
  });

  it('a RoleBinding grants in its own namespace only, also when it refers to a ClusterRole', async () => {
    const { sim, token } = await setup();
    await api(sim, 'POST', `${RBAC}/clusterroles`, {
      metadata: { name: 'svc-reader' },
      rules: [{ apiGroups: [''], resources: ['services'], verbs: ['get', 'list'] }],
    });
    const rb = await api(sim, 'POST', `${RBAC}/namespaces/apps/rolebindings`, {
      metadata: { name: 'bot-reads' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'svc-reader' },
      subjects: [{ kind: 'ServiceAccount', name: 'bot', namespace: 'ops' }],
    });
    expect(rb.status).toBe(201);
    expect((await api(sim, 'GET', '/api/v1/namespaces/apps/services', undefined, { token })).status).toBe(
      200,
    );
    expect((await api(sim, 'GET', '/api/v1/namespaces/ops/services', undefined, { token })).status).toBe(403);
    expect((await api(sim, 'GET', '/api/v1/services', undefined, { token })).status).toBe(403);
    // A ClusterRoleBinding grants everywhere, including the cluster scope.
    await api(sim, 'POST', `${RBAC}/clusterrolebindings`, {
      metadata: { name: 'bot-reads-all' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'svc-reader' },
      subjects: [{ kind: 'Group', name: 'system:serviceaccounts:ops' }],
    });
    expect((await api(sim, 'GET', '/api/v1/services', undefined, { token })).status).toBe(200);
    // roleRef cannot change.
    const bad = await api(sim, 'PUT', `${RBAC}/namespaces/apps/rolebindings/bot-reads`, {
      metadata: { name: 'bot-reads' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'other' },
      subjects: [],
    });
    expect(bad.status).toBe(422);
    expect(bad.body.message).toContain('cannot change roleRef');
  });

  it('resourceNames limit get and update, never list or create; a deleted ServiceAccount loses its token', async () => {
    const { sim, token } = await setup();
    await api(sim, 'POST', `${RBAC}/namespaces/ops/roles`, {
      metadata: { name: 'lease' },
      rules: [
        {
          apiGroups: ['coordination.k8s.io'],
          resources: ['leases'],
          resourceNames: ['leader'],
          verbs: ['*'],
        },
      ],
    });
    await api(sim, 'POST', `${RBAC}/namespaces/ops/rolebindings`, {
      metadata: { name: 'lease' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'lease' },
      subjects: [{ kind: 'ServiceAccount', name: 'bot' }],
    });
    const leases = '/apis/coordination.k8s.io/v1/namespaces/ops/leases';
    const lease = { metadata: { name: 'leader' }, spec: { holderIdentity: 'x' } };
    expect((await api(sim, 'POST', leases, lease, { token })).status).toBe(403);
    expect((await api(sim, 'POST', leases, lease)).status).toBe(201);
    expect((await api(sim, 'GET', `${leases}/leader`, undefined, { token })).status).toBe(200);
    expect((await api(sim, 'GET', leases, undefined, { token })).status).toBe(403);
    await api(sim, 'POST', leases, { metadata: { name: 'other' } });
    expect((await api(sim, 'GET', `${leases}/other`, undefined, { token })).status).toBe(403);
    await api(sim, 'DELETE', '/api/v1/namespaces/ops/serviceaccounts/bot');
    expect((await api(sim, 'GET', `${leases}/leader`, undefined, { token })).status).toBe(401);
    expect(() => sim.serviceAccountToken('ops', 'bot')).toThrow(/not found/);
  });

  it('a subresource needs its own rule: jobs/status', async () => {
    const { sim, token } = await setup();
    const job = await api(sim, 'POST', '/apis/batch/v1/namespaces/ops/jobs', {
      metadata: { name: 'hook' },
      spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'i' }] } } },
    });
    expect(job.status).toBe(201);
    await api(sim, 'POST', `${RBAC}/namespaces/ops/roles`, {
      metadata: { name: 'jobs' },
      rules: [{ apiGroups: ['batch'], resources: ['jobs'], verbs: ['get', 'update'] }],
    });
    await api(sim, 'POST', `${RBAC}/namespaces/ops/rolebindings`, {
      metadata: { name: 'jobs' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'jobs' },
      subjects: [{ kind: 'ServiceAccount', name: 'bot', namespace: 'ops' }],
    });
    const status = { ...job.body, status: { succeeded: 1 } };
    const denied = await api(sim, 'PUT', '/apis/batch/v1/namespaces/ops/jobs/hook/status', status, { token });
    expect(denied.status).toBe(403);
    expect(denied.body.message).toContain('cannot update resource "jobs/status" in API group "batch"');
  });
});

describe('kubesim stores what a chart installs', () => {
  const start = useSim();

  it('Secrets: stringData folds into base64 data, bad base64 and a changed type are 422', async () => {
    const sim = await start();
    const created = await api(sim, 'POST', '/api/v1/namespaces/default/secrets', {
      metadata: { name: 's' },
      stringData: { API_KEY: 'k€y' },
      data: { other: Buffer.from('x').toString('base64') },
    });
    expect(created.status).toBe(201);
    expect(created.body.type).toBe('Opaque');
    expect(created.body.stringData).toBeUndefined();
    expect(Buffer.from(created.body.data.API_KEY, 'base64').toString()).toBe('k€y');
    const bad = await api(sim, 'POST', '/api/v1/namespaces/default/secrets', {
      metadata: { name: 'b' },
      data: { k: 'not base64!' },
    });
    expect(bad.status).toBe(422);
    const retype = await api(sim, 'PUT', '/api/v1/namespaces/default/secrets/s', {
      ...created.body,
      type: 'kubernetes.io/tls',
    });
    expect(retype.status).toBe(422);
  });

  it('Jobs: status only through /status; a spec write keeps it; defaults and the generated selector', async () => {
    const sim = await start();
    await createNs(sim, 'ops');
    const job = await api(sim, 'POST', '/apis/batch/v1/namespaces/ops/jobs', {
      metadata: { name: 'hook', annotations: { a: '1' } },
      spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'i' }] } } },
      status: { succeeded: 5 },
    });
    expect(job.body.status).toBeUndefined();
    expect(job.body.spec).toMatchObject({ backoffLimit: 6, completions: 1, parallelism: 1 });
    expect(job.body.spec.selector.matchLabels['batch.kubernetes.io/controller-uid']).toBe(
      job.body.metadata.uid,
    );
    const done = await api(sim, 'PUT', '/apis/batch/v1/namespaces/ops/jobs/hook/status', {
      ...job.body,
      metadata: { ...job.body.metadata, annotations: { a: 'changed' } },
      status: { succeeded: 1, conditions: [{ type: 'Complete', status: 'True' }] },
    });
    expect(done.status).toBe(200);
    expect(done.body.status.succeeded).toBe(1);
    expect(done.body.metadata.annotations.a).toBe('1');
    const relabel = await api(sim, 'PUT', '/apis/batch/v1/namespaces/ops/jobs/hook', {
      ...done.body,
      metadata: { ...done.body.metadata, labels: { x: 'y' } },
      status: {},
    });
    expect(relabel.body.status.succeeded).toBe(1);
    expect(
      (await api(sim, 'GET', '/apis/batch/v1/namespaces/ops/jobs/hook/status')).body.status.succeeded,
    ).toBe(1);
  });

  it('Deployments: defaults, generation, and a selector that must match the template', async () => {
    const sim = await start();
    const body = {
      metadata: { name: 'd' },
      spec: {
        selector: { matchLabels: { app: 'd' } },
        template: { metadata: { labels: { app: 'd' } }, spec: { containers: [{ name: 'c', image: 'i' }] } },
      },
    };
    const d = await api(sim, 'POST', '/apis/apps/v1/namespaces/default/deployments', body);
    expect(d.status).toBe(201);
    expect(d.body.metadata.generation).toBe(1);
    expect(d.body.spec).toMatchObject({
      replicas: 1,
      revisionHistoryLimit: 10,
      strategy: { type: 'RollingUpdate' },
    });
    const mismatch = await api(sim, 'POST', '/apis/apps/v1/namespaces/default/deployments', {
      ...body,
      metadata: { name: 'e' },
      spec: { ...body.spec, selector: { matchLabels: { app: 'other' } } },
    });
    expect(mismatch.status).toBe(422);
    expect(mismatch.body.message).toContain('`selector` does not match template `labels`');
  });

  it('a Deployment selector and a Job template are immutable (422 naming the field)', async () => {
    const sim = await start();
    const labels = { app: 'd', v: '1' };
    const d = await api(sim, 'POST', '/apis/apps/v1/namespaces/default/deployments', {
      metadata: { name: 'd' },
      spec: {
        selector: { matchLabels: { app: 'd' } },
        template: { metadata: { labels }, spec: { containers: [{ name: 'c', image: 'i' }] } },
      },
    });
    const reselect = await api(sim, 'PUT', '/apis/apps/v1/namespaces/default/deployments/d', {
      ...d.body,
      spec: { ...d.body.spec, selector: { matchLabels: { app: 'd', v: '1' } } },
    });
    expect(reselect.status).toBe(422);
    expect(reselect.body.message).toContain('spec.selector');
    expect(reselect.body.message).toContain('field is immutable');
    const scale = await api(sim, 'PUT', '/apis/apps/v1/namespaces/default/deployments/d', {
      ...d.body,
      spec: { ...d.body.spec, replicas: 3 },
    });
    expect(scale.status).toBe(200);

    const job = await api(sim, 'POST', '/apis/batch/v1/namespaces/default/jobs', {
      metadata: { name: 'j' },
      spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'i' }] } } },
    });
    const changed = structuredClone(job.body);
    changed.spec.template.spec.containers[0].image = 'other';
    const rejob = await api(sim, 'PUT', '/apis/batch/v1/namespaces/default/jobs/j', changed);
    expect(rejob.status).toBe(422);
    expect(rejob.body.message).toContain('spec.template');
  });
});
