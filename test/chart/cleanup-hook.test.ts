import { describe, expect, it } from 'vitest';
import { REQUIRED, find, helmTool, render, type K8sObject } from './helm.js';

/**
 * Issue #20: with `bindings.enabled: false` a post-upgrade hook Job applies the uninstall policy
 * to the Services projected before (`endpoint-binder uninstall --services-only`), with Service
 * rights that exist only while it runs. The e2e (test/e2e/kubesim-upgrade.test.ts) runs it.
 */

const NS = 'ops';
const OFF = { ...REQUIRED, bindings: { enabled: false } };
const cleanupObjects = (objs: K8sObject[]): K8sObject[] =>
  objs.filter((o) => o.metadata.labels?.['app.kubernetes.io/component'] === 'cleanup');

describe.skipIf('skip' in helmTool)('the bindings-off cleanup hook', () => {
  it('is rendered only when bindings are off and the uninstall hook is on', async () => {
    expect(cleanupObjects(await render(REQUIRED))).toEqual([]);
    expect(cleanupObjects(await render({ ...OFF, uninstall: { hook: { enabled: false } } }))).toEqual([]);
    expect(
      cleanupObjects(await render(OFF))
        .map((o) => `${o.kind}/${o.metadata.name}`)
        .sort(),
    ).toEqual([
      `ClusterRole/eb-endpoint-binder-${NS}-cleanup`,
      `ClusterRoleBinding/eb-endpoint-binder-${NS}-cleanup`,
      'Job/eb-endpoint-binder-cleanup',
    ]);
  });

  it('runs uninstall --services-only with the policy, as the uninstall service account, without the API key', async () => {
    for (const policy of ['delete', 'retain']) {
      const job = find(await render({ ...OFF, uninstall: { policy } }), 'Job', 'eb-endpoint-binder-cleanup');
      expect(job.metadata.annotations).toMatchObject({
        'helm.sh/hook': 'post-upgrade,post-rollback',
        'helm.sh/hook-weight': '0',
        'helm.sh/hook-delete-policy': 'before-hook-creation,hook-succeeded',
      });
      const pod = job['spec'].template.spec;
      expect(pod.serviceAccountName).toBe('eb-endpoint-binder-uninstall');
      const c = pod.containers[0];
      expect(c.args).toEqual([
        'uninstall',
        '--services-only',
        '--config',
        '/etc/endpoint-binder/controller.yaml',
        '--policy',
        policy,
      ]);
      expect(c.env.map((e: { name: string }) => e.name)).not.toContain('ENDPOINT_BINDER_API_KEY');
      expect(pod.volumes.find((v: { name: string }) => v.name === 'config').configMap.name).toBe(
        'eb-endpoint-binder-controller',
      );
    }
  });

  it('gets Service rights (no Lease, no create) as hook resources created before the Job and deleted after it', async () => {
    const objs = await render(OFF);
    const role = find(objs, 'ClusterRole', `eb-endpoint-binder-${NS}-cleanup`);
    expect(role['rules']).toEqual([
      { apiGroups: [''], resources: ['services'], verbs: ['get', 'list', 'delete', 'update'] },
    ]);
    const binding = find(objs, 'ClusterRoleBinding', `eb-endpoint-binder-${NS}-cleanup`);
    expect(binding['subjects']).toEqual([
      { kind: 'ServiceAccount', name: 'eb-endpoint-binder-uninstall', namespace: NS },
    ]);
    for (const o of [role, binding])
      expect(o.metadata.annotations).toMatchObject({
        'helm.sh/hook': 'post-upgrade,post-rollback',
        'helm.sh/hook-weight': '-5',
        'helm.sh/hook-delete-policy': 'before-hook-creation,hook-succeeded',
      });
    // The fence holds the hook's service account as it holds the uninstall hook's.
    const fence = find(objs, 'ValidatingAdmissionPolicy', `eb-endpoint-binder-${NS}-fence`);
    expect(JSON.stringify(fence['spec'].matchConditions)).toContain(
      `system:serviceaccount:${NS}:eb-endpoint-binder-uninstall`,
    );
    // Without rbac.create the rights are the user's to grant; the Job still runs.
    const noRbac = cleanupObjects(await render({ ...OFF, rbac: { create: false } }));
    expect(noRbac.map((o) => o.kind)).toEqual(['Job']);
  });

  it('fits its names for a 53-character release in a long namespace', async () => {
    const release = 'a-very-long-release-name-for-endpoint-binder-tests-01';
    const objs = cleanupObjects(await render(OFF, { release, namespace: `ns-${'x'.repeat(60)}` }));
    expect(objs).toHaveLength(3);
    for (const o of objs) expect(o.metadata.name.length, o.metadata.name).toBeLessThanOrEqual(63);
  });
});
