import { CoordinationV1Api } from '@kubernetes/client-node';
import { afterAll, describe, expect, it } from 'vitest';
import { allowedByRules, rbacRulesFor, type RbacObjects } from '../../src/kubesim/index.js';
import type { KubeObject } from '../../src/kubesim/types.js';
import { UNINSTALLED_AT_ANNOTATION } from '../../src/kube/leader/uninstall-mark.js';
import { k8sTool } from '../helpers/k8s-tools.js';
import { startKubesimTarget, type KubesimTarget } from './kubesim-target.js';
import { deepMerge, defineScenario } from './scenario.js';
import { budget } from '../helpers/budget.js';

/**
 * The e2e scenario (scenario.ts) inside `npm test`: the real helm installs, upgrades and
 * uninstalls the chart into kubesim, the controller (2 replicas) and the forwarder run as local
 * processes with their ServiceAccounts' tokens, and every request they make is authorized from
 * the RBAC objects helm created. Afterwards: no request of theirs was denied, and every rendered
 * rule was needed — without it, some request they made would have been forbidden.
 */

const helm = k8sTool('helm');
let target: KubesimTarget | undefined;
/** A second install whose controllers never ran (replicas 0): its uninstall must create the Lease. */
let idle: KubesimTarget | undefined;

describe.skipIf('skip' in helm)('e2e on kubesim', () => {
  defineScenario(
    'the e2e scenario against kubesim with the real helm',
    async () => (target = await startKubesimTarget()),
    { stepTimeoutMs: 60_000, setupTimeoutMs: 120_000 },
  );

  describe('an install whose controllers never ran', () => {
    afterAll(async () => idle?.close(), budget(60_000));

    it(
      'uninstalls: the hook creates the controller Lease marked uninstalled, then releases it',
      { timeout: budget(120_000) },
      async () => {
        idle = await startKubesimTarget();
        await idle.install(deepMerge(idle.baseValues, { controller: { replicas: 0 } }));
        await idle.uninstall();
        const lease = await idle
          .kubeConfig()
          .makeApiClient(CoordinationV1Api)
          .readNamespacedLease({ namespace: idle.namespace, name: `${idle.release}-controller` });
        expect(lease.spec?.holderIdentity).toBe('');
        expect(lease.metadata?.annotations?.[UNINSTALLED_AT_ANNOTATION]).toBeTruthy();
        expect(idle.crashes()).toEqual([]);
      },
    );
  });

  describe('RBAC, proven by the run', () => {
    const serviceAccountRequests = () =>
      [...(target?.sim.audit() ?? []), ...(idle?.sim.audit() ?? [])].filter((r) =>
        r.user.startsWith('system:serviceaccount:'),
      );

    it('no component crashed and no request of theirs was forbidden', () => {
      expect(target).toBeDefined();
      expect(target!.crashes()).toEqual([]);
      const denied = serviceAccountRequests().filter((r) => !r.allowed);
      expect(denied.map((r) => ({ user: r.user, ...r.attrs }))).toEqual([]);
      // Each component did work under its own identity.
      const users = new Set(serviceAccountRequests().map((r) => r.user.split(':').pop()));
      expect([...users].sort()).toEqual([
        'eb-endpoint-binder-controller',
        'eb-endpoint-binder-forwarder',
        'eb-endpoint-binder-uninstall',
      ]);
    });

    it('every rendered rule is needed: without any single one, some request made would be forbidden', () => {
      const rbac = target?.rbac();
      expect(rbac).toBeDefined();
      const requests = serviceAccountRequests().filter((r) => r.allowed);
      const roles: { kind: 'roles' | 'clusterRoles'; role: KubeObject }[] = [
        ...rbac!.roles.map((role) => ({ kind: 'roles' as const, role })),
        ...rbac!.clusterRoles.map((role) => ({ kind: 'clusterRoles' as const, role })),
      ];
      expect(roles.length).toBeGreaterThanOrEqual(4);
      const unneeded: string[] = [];
      let checked = 0;
      for (const { kind, role } of roles) {
        const rules = (role['rules'] ?? []) as unknown[];
        rules.forEach((rule, i) => {
          checked++;
          const reduced: RbacObjects = {
            ...rbac!,
            [kind]: rbac![kind].map((r) =>
              r === role ? { ...r, rules: rules.filter((_, j) => j !== i) } : r,
            ),
          };
          const wouldFail = requests.some((r) => {
            const who = {
              user: r.user,
              groups: [
                'system:serviceaccounts',
                `system:serviceaccounts:${r.user.split(':')[2]}`,
                'system:authenticated',
              ],
            };
            return !allowedByRules(rbacRulesFor(reduced, who), r.attrs);
          });
          if (!wouldFail && !onlyOffTheHappyPath(role.metadata.name, rule))
            unneeded.push(`${role.kind}/${role.metadata.name} rule ${i}: ${JSON.stringify(rule)}`);
        });
      }
      expect(checked).toBeGreaterThanOrEqual(7);
      expect(unneeded).toEqual([]);
    });
  });
});

/**
 * Rules that the scenario's components cannot need, each needed on a path that other tests walk:
 * the forwarder's Warning Event `IngressRecordRefused`, sent only when the install record names
 * an ingress other than the pinned one (test/forwarder/ingress-pin.test.ts); the controller's
 * `pods` get/list, used by `endpoint-binder check` run in its pod (test/real/product.real.ts
 * runs it with the controller's token on a real API server) and by the DATA PATH reads of the
 * forwarder pods (test/controller/forwarder-health.test.ts): this scenario's kubesim serves no
 * pods (its target runs the Deployments' replicas itself), so the read is answered 404 before
 * any authorization here; the config-check hook's `events`
 * create, used only when it refuses the values (test/e2e/kubesim-install-refused.test.ts).
 */
function onlyOffTheHappyPath(role: string, rule: unknown): boolean {
  const r = rule as { resources?: string[]; verbs?: string[] };
  const only = (resource: string) => r.resources?.length === 1 && r.resources[0] === resource;
  return (
    (role.endsWith('-forwarder') && only('events')) ||
    (role.endsWith('-controller-check') && only('pods')) ||
    (role.endsWith('-config-check') && only('events'))
  );
}
