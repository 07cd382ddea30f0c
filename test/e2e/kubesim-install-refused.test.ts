import { AppsV1Api, CoreV1Api, RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ownershipSelector } from '../../src/binding/ownership/index.js';
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
      // Only the hook's own objects exist: the failed Job (kept for its log), its ConfigMap and the
      // account it reported the refusal with.
      expect(
        (await core.listServiceAccountForAllNamespaces(mine)).items.map((a) => a.metadata?.name),
      ).toEqual([`${t.release}-endpoint-binder-config-check`]);
      expect((await core.listConfigMapForAllNamespaces(mine)).items.map((c) => c.metadata?.name)).toEqual([
        `${t.release}-endpoint-binder-config-check`,
      ]);
      // Issue #29 item 2: the cause where helm users look, an Event in the release's namespace on
      // the hook Job, naming the setting and the fix, written with the hook's own account.
      const events = (await core.listNamespacedEvent({ namespace: t.namespace })).items.filter(
        (e) => e.reason === 'ConfigRefused',
      );
      expect(events.map((e) => [e.type, e.involvedObject.kind, e.involvedObject.name])).toEqual([
        ['Warning', 'Job', `${t.release}-endpoint-binder-config-check`],
      ]);
      expect(events[0]?.message).toMatch(
        /^The config check refused these values: bindings\.endpointSelector: invalid endpoint selector.*Fix: correct that value and run helm upgrade --install/,
      );
      expect(run?.output).toContain(`Event ConfigRefused written in namespace ${t.namespace}`);
      expect(t.crashes()).toEqual([]);
    },
  );

  it(
    'a second helm install is refused by helm; helm upgrade --install with the fix (as the Event says) deploys',
    { timeout: budget(240_000) },
    async () => {
      // Issue #29 item 2: the obvious next step after a refused install.
      const again = await t.tryInstall(t.baseValues);
      expect(again.ok).toBe(false);
      expect(again.error).toContain('cannot re-use a name that is still in use');
      const out = await t.upgradeInstall(t.baseValues);
      expect(out).toContain('STATUS: deployed');
      const apps = t.kubeConfig().makeApiClient(AppsV1Api);
      const controller = await apps.readNamespacedDeployment({
        namespace: t.namespace,
        name: `${t.release}-endpoint-binder-controller`,
      });
      // The release's objects now exist (the target's kubelet has started its pods: rollOut()).
      expect(controller.metadata?.labels?.['app.kubernetes.io/instance']).toBe(t.release);
      expect(t.crashes()).toEqual([]);
    },
  );
});
