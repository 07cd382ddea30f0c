import { AppsV1Api, CoreV1Api, RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ownershipSelector } from '../../src/binding/identity.js';
import { k8sTool } from '../helpers/k8s-tools.js';
import { startKubesimTarget, type KubesimTarget } from './kubesim-target.js';
import { deepMerge } from './scenario.js';
import { budget } from '../helpers/budget.js';

/**
 * Issue #20: a `helm install` (not only an upgrade) with a selector that does not compile is
 * refused by the pre-install config-check hook, with the CEL message and its caret, before any
 * of the release's objects exist: no Deployment, no RBAC, no Service of ours. Checked with lists
 * straight from the API server.
 */

const helm = k8sTool('helm');

describe.skipIf('skip' in helm)('helm install into kubesim with a selector that does not compile', () => {
  let t: KubesimTarget;

  beforeAll(async () => {
    t = await startKubesimTarget();
  }, budget(120_000));
  afterAll(async () => t?.close(), budget(120_000));

  it(
    'fails with the CEL message and its caret; nothing of the release is created',
    { timeout: budget(180_000) },
    async () => {
      const r = await t.tryInstall(
        deepMerge(t.baseValues, { bindings: { endpointSelector: 'endpoint.namespace ==' } }),
      );
      expect(r.ok).toBe(false);
      // Helm 3's wording for an install (an upgrade says "pre-upgrade hooks failed").
      expect(r.error).toContain('failed pre-install');
      expect(r.error).toContain(`job ${t.release}-endpoint-binder-config-check failed: BackoffLimitExceeded`);
      const run = t.hookRuns().pop();
      expect(run?.job).toBe(`${t.release}-endpoint-binder-config-check`);
      expect(run?.code).toBe(1);
      // What `kubectl logs job/<release>-endpoint-binder-config-check` shows.
      expect(run?.output).toContain('bindings.endpointSelector');
      expect(run?.output).toMatch(/\n\s*\^/);

      const kc = t.kubeConfig();
      const apps = kc.makeApiClient(AppsV1Api);
      const core = kc.makeApiClient(CoreV1Api);
      const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
      const mine = { labelSelector: `app.kubernetes.io/instance=${t.release}` };
      expect((await apps.listDeploymentForAllNamespaces(mine)).items).toEqual([]);
      expect((await core.listServiceForAllNamespaces(mine)).items).toEqual([]);
      expect(
        (
          await core.listServiceForAllNamespaces({
            labelSelector: ownershipSelector({ release: t.release, operatorNamespace: t.namespace }),
          })
        ).items,
      ).toEqual([]);
      expect((await rbac.listClusterRole(mine)).items).toEqual([]);
      expect((await rbac.listClusterRoleBinding(mine)).items).toEqual([]);
      expect((await core.listServiceAccountForAllNamespaces(mine)).items).toEqual([]);
      // Only the hook's own objects exist: the failed Job (kept for its log) and its ConfigMap.
      expect((await core.listConfigMapForAllNamespaces(mine)).items.map((c) => c.metadata?.name)).toEqual([
        `${t.release}-endpoint-binder-config-check`,
      ]);
      expect(t.crashes()).toEqual([]);
    },
  );
});
