import { describe, expect, it } from 'vitest';
import { find, render, REQUIRED } from '../chart/helm.js';
import { eventually, type FidelityServer, type Loose } from './server.js';

/**
 * ValidatingAdmissionPolicy, and above all the chart's own fence
 * (charts/endpoint-binder/templates/fence.yaml rendered by the real helm): the server accepts
 * the policy, and it allows and refuses the same requests with the same answers on both servers.
 */
export function defineAdmission(server: FidelityServer): void {
  describe('ValidatingAdmissionPolicy', () => {
    const VAP = '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies';
    const VAPB = '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings';

    it('a policy that does not compile is refused on the field, with the compiler position', async () => {
      const name = `fid-bad-${Date.now().toString(36)}`;
      const r = await server.api('POST', VAP, {
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'ValidatingAdmissionPolicy',
        metadata: { name },
        spec: {
          matchConstraints: {
            resourceRules: [
              { apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['services'] },
            ],
          },
          validations: [
            { expression: 'object.spec.type ==' },
            { expression: "object.spec.type == 'ClusterIP'" },
            { expression: 'object.spec.paused' },
          ],
        },
      });
      expect(r.status, JSON.stringify(r.body)).toBe(422);
      expect(r.body.details).toMatchObject({
        name,
        group: 'admissionregistration.k8s.io',
        kind: 'ValidatingAdmissionPolicy',
      });
      const causes = r.body.details.causes.map((c: Loose) => `${c.reason} ${c.field}`);
      expect(causes).toEqual([
        'FieldValueInvalid spec.validations[0].expression',
        'FieldValueInvalid spec.validations[2].expression',
      ]);
      expect(r.body.details.causes[0].message).toMatch(
        /^Invalid value: "object\.spec\.type ==": compilation failed: ERROR: <input>:1:20: Syntax error: /,
      );
    });

    it('Warn and Deny actions, messageExpression, variables, matchConditions and failurePolicy', async () => {
      const ns = await server.namespace('fid-vap');
      const name = `${ns}-p`;
      const policy = (failurePolicy: string) => ({
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'ValidatingAdmissionPolicy',
        metadata: { name },
        spec: {
          failurePolicy,
          matchConstraints: {
            namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns } },
            resourceRules: [
              {
                apiGroups: [''],
                apiVersions: ['v1'],
                operations: ['CREATE', 'UPDATE'],
                resources: ['configmaps'],
              },
            ],
          },
          matchConditions: [{ name: 'not-exempt', expression: "!object.metadata.name.startsWith('exempt')" }],
          variables: [
            {
              name: 'mode',
              expression: "has(object.data) && 'mode' in object.data ? object.data['mode'] : ''",
            },
          ],
          validations: [
            {
              expression: "variables.mode != 'slow'",
              messageExpression: "'mode ' + variables.mode + ' is not allowed in ' + request.namespace",
              reason: 'Forbidden',
            },
            { expression: "object.data['must'] == 'x'", message: 'must is x' },
          ],
        },
      });
      const binding = (actions: string[]) => ({
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'ValidatingAdmissionPolicyBinding',
        metadata: { name },
        spec: { policyName: name, validationActions: actions },
      });
      const cm = (n: string, data: Record<string, string>) =>
        server.api('POST', `/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: n }, data });
      let n = 0;
      const next = () => `cm-${n++}`;
      try {
        expect((await server.api('POST', VAP, policy('Fail'))).status).toBe(201);
        expect((await server.api('POST', VAPB, binding(['Deny']))).status).toBe(201);
        const denied = await eventually('the policy in force', async () => {
          const r = await cm(next(), { mode: 'slow', must: 'x' });
          return r.status === 403 ? r : undefined;
        });
        expect(denied.body).toMatchObject({ reason: 'Forbidden', code: 403 });
        expect(denied.body.message).toMatch(
          new RegExp(
            `^configmaps "cm-\\d+" is forbidden: ValidatingAdmissionPolicy '${name}' with binding '${name}' denied request: mode slow is not allowed in ${ns}$`,
          ),
        );
        const invalid = await cm('plain', { must: 'y' });
        expect(invalid.status).toBe(422);
        expect(invalid.body.reason).toBe('Invalid');
        expect(invalid.body.message).toBe(
          // Sic: "forbidden" wording, with reason Invalid and code 422 (the dispatcher's NewForbidden, recoded).
          `configmaps "plain" is forbidden: ValidatingAdmissionPolicy '${name}' with binding '${name}' denied request: must is x`,
        );
        expect((await cm('exempt-1', { mode: 'slow' })).status, 'matchConditions false').toBe(201);
        // A missing key is an evaluation error (an empty data map is not there at all, omitempty): Fail refuses, Ignore lets it through.
        const failed = await cm('nokey', {});
        // The error counts as that validation failing: its reason (Invalid) decides the code.
        expect(failed.status).toBe(422);
        expect(failed.body.message).toContain(
          `ValidatingAdmissionPolicy '${name}' with binding '${name}' denied request: expression 'object.data['must'] == 'x'' resulted in error: no such key: data`,
        );

        const current = await server.api('GET', `${VAP}/${name}`);
        await server.api('PUT', `${VAP}/${name}`, { ...policy('Ignore'), metadata: current.body.metadata });
        await server.api('DELETE', `${VAPB}/${name}`);
        expect((await server.api('POST', VAPB, binding(['Warn']))).status).toBe(201);
        const warned = await eventually('the Warn binding in force', async () => {
          const r = await cm(next(), { mode: 'slow', must: 'x' });
          return r.status === 201 && r.headers['warning'] ? r : undefined;
        });
        expect(warned.headers['warning']).toBe(
          `299 - "Validation failed for ValidatingAdmissionPolicy '${name}' with binding '${name}': mode slow is not allowed in ${ns}"`,
        );
        expect((await cm('nokey-ignored', {})).status, 'failurePolicy Ignore').toBe(201);
      } finally {
        await server.api('DELETE', `${VAPB}/${name}`);
        await server.api('DELETE', `${VAP}/${name}`);
      }
    });

    it("the chart's fence: accepted by the server, and the same requests allowed and refused", async () => {
      const opNs = await server.namespace('fid-op');
      const appNs = await server.namespace('fid-app');
      const closedNs = await server.namespace('fid-closed');
      await server.api(
        'PATCH',
        `/api/v1/namespaces/${closedNs}`,
        { metadata: { labels: { 'endpoint-binder.io/aliases': 'disabled' } } },
        { contentType: 'application/merge-patch+json' },
      );
      const deniedNs = `kube-${appNs}`;
      expect((await server.api('POST', '/api/v1/namespaces', { metadata: { name: deniedNs } })).status).toBe(
        201,
      );
      const release = `f${opNs.slice(-8)}`;
      const objs = await render(REQUIRED, { release, namespace: opNs });
      const policy = objs.find((o) => o.kind === 'ValidatingAdmissionPolicy')!;
      const binding = find(objs, 'ValidatingAdmissionPolicyBinding', policy.metadata.name);
      const name = policy.metadata.name;
      const controllerSa = `${release}-endpoint-binder-controller`;
      expect(policy.spec.matchConditions[0].expression).toContain(
        `system:serviceaccount:${opNs}:${controllerSa}`,
      );

      // The controller's ServiceAccount may write Services everywhere (RBAC); the fence narrows it.
      await server.api('POST', `/api/v1/namespaces/${opNs}/serviceaccounts`, {
        metadata: { name: controllerSa },
      });
      const token = await server.serviceAccountToken(opNs, controllerSa);
      const rbac = '/apis/rbac.authorization.k8s.io/v1';
      await server.api('POST', `${rbac}/clusterroles`, {
        metadata: { name: `${name}-svc` },
        rules: [
          { apiGroups: [''], resources: ['services'], verbs: ['get', 'create', 'update', 'patch', 'delete'] },
        ],
      });
      await server.api('POST', `${rbac}/clusterrolebindings`, {
        metadata: { name: `${name}-svc` },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: `${name}-svc` },
        subjects: [{ kind: 'ServiceAccount', name: controllerSa, namespace: opNs }],
      });
      try {
        const p = await server.api('POST', VAP, policy);
        expect(p.status, `the rendered policy: ${JSON.stringify(p.body)}`).toBe(201);
        const b = await server.api('POST', VAPB, binding);
        expect(b.status, `the rendered binding: ${JSON.stringify(b.body)}`).toBe(201);
        expect(p.body.spec).toMatchObject({
          failurePolicy: 'Fail',
          matchConstraints: { matchPolicy: 'Equivalent' },
        });

        const labels = {
          'app.kubernetes.io/managed-by': 'endpoint-binder',
          'app.kubernetes.io/instance': release,
          'endpoint-binder.io/operator-namespace': opNs,
        };
        const svc = (n: string, spec: Record<string, unknown>, l?: Record<string, string>) => ({
          metadata: { name: n, ...(l ? { labels: l } : {}) },
          spec,
        });
        const internal = { ports: [{ port: 80, targetPort: 30001 }] };
        const alias = { type: 'ExternalName', externalName: `internal.${opNs}.svc.cluster.local` };
        const outcome = async (
          method: string,
          ns: string,
          n: string,
          body?: unknown,
          asController = true,
        ) => {
          const path = `/api/v1/namespaces/${ns}/services${method === 'POST' ? '' : `/${n}`}`;
          const r = await server.api(method, path, body, {
            ...(asController ? { token } : {}),
            ...(method === 'PATCH' ? { contentType: 'application/merge-patch+json' } : {}),
          });
          return r.status < 300 ? `${r.status}` : `${r.status} ${r.body.message}`;
        };
        const denied = (n: string, why: string) =>
          `403 services "${n}" is forbidden: ValidatingAdmissionPolicy '${name}' with binding '${name}' denied request: endpoint-binder fence: ${why}`;
        const ownNew = `a Service written by the operator must carry the ownership labels of release ${release} in namespace ${opNs} (app.kubernetes.io/managed-by=endpoint-binder, app.kubernetes.io/instance=${release}, endpoint-binder.io/operator-namespace=${opNs})`;
        const ownOld = `this Service does not carry the ownership labels of release ${release} in namespace ${opNs} (app.kubernetes.io/managed-by=endpoint-binder, app.kubernetes.io/instance=${release}, endpoint-binder.io/operator-namespace=${opNs}); the operator may not change or delete it`;
        const typeMsg = `spec.type must be ClusterIP in the operator namespace ${opNs} (internal Services) and ExternalName elsewhere (aliases)`;

        // The policy takes a moment to reach a real server's admission plugin.
        await eventually('the fence in force', async () => {
          const r = await outcome('POST', opNs, 'probe', svc('probe', internal));
          return r.startsWith('403') ? r : undefined;
        });
        expect(
          (
            await server.api(
              'POST',
              `/api/v1/namespaces/${appNs}/services`,
              svc('tenant', { ports: [{ port: 80 }] }),
            )
          ).status,
        ).toBe(201);

        const cases: [string, string, string, string, unknown, boolean?][] = [
          ['own internal Service', 'POST', opNs, 'web', svc('web', internal, labels)],
          ['unlabelled internal Service', 'POST', opNs, 'bare', svc('bare', internal)],
          [
            'NodePort in the operator namespace',
            'POST',
            opNs,
            'np',
            svc('np', { ...internal, type: 'NodePort' }, labels),
          ],
          [
            'externalIPs',
            'POST',
            opNs,
            'ext',
            svc('ext', { ...internal, externalIPs: ['192.0.2.1'] }, labels),
          ],
          ['own alias', 'POST', appNs, 'alias', svc('alias', alias, labels)],
          ['ClusterIP outside the operator namespace', 'POST', appNs, 'cip', svc('cip', internal, labels)],
          ['alias in a denied namespace', 'POST', deniedNs, 'alias', svc('alias', alias, labels)],
          ['alias in a namespace that opted out', 'POST', closedNs, 'alias', svc('alias', alias, labels)],
          ['relabel the tenant Service', 'PATCH', appNs, 'tenant', { metadata: { labels } }],
          ['delete the tenant Service', 'DELETE', appNs, 'tenant', undefined],
          [
            'drop a label from its own alias',
            'PATCH',
            appNs,
            'alias',
            { metadata: { labels: { 'app.kubernetes.io/instance': null } } },
          ],
          ['delete its own alias', 'DELETE', appNs, 'alias', undefined],
          [
            'an admin is not fenced',
            'POST',
            appNs,
            'admin-np',
            svc('admin-np', { ports: [{ port: 80 }], type: 'NodePort' }),
            false,
          ],
        ];
        const seen: string[] = [];
        for (const [what, method, ns, n, body, asController] of cases)
          seen.push(`${what}: ${await outcome(method, ns, n, body, asController ?? true)}`);
        expect(seen).toEqual([
          'own internal Service: 201',
          `unlabelled internal Service: ${denied('bare', ownNew)}`,
          `NodePort in the operator namespace: ${denied('np', typeMsg)}`,
          `externalIPs: ${denied('ext', 'spec.externalIPs must be empty on a Service the operator writes')}`,
          'own alias: 201',
          `ClusterIP outside the operator namespace: ${denied('cip', typeMsg)}`,
          `alias in a denied namespace: ${denied('alias', `namespace ${deniedNs} is closed to the operator by namespaces.deny (kube-*, openshift, openshift-*)`)}`,
          `alias in a namespace that opted out: ${denied('alias', `namespace ${closedNs} does not match namespaces.selector (endpoint-binder.io/aliases notin (disabled)); the operator may not write Services there`)}`,
          `relabel the tenant Service: ${denied('tenant', ownOld)}`,
          `delete the tenant Service: ${denied('tenant', ownOld)}`,
          `drop a label from its own alias: ${denied('alias', ownNew)}`,
          'delete its own alias: 200',
          'an admin is not fenced: 201',
        ]);
        const stored = await server.api('GET', `${VAP}/${name}`);
        if (server.kind === 'kube-apiserver') {
          // The real server type-checks the policy: no warning means every expression checked clean.
          const checked = await eventually('status.typeChecking', async () => {
            const r = await server.api('GET', `${VAP}/${name}`);
            return r.body.status?.typeChecking ? r.body.status : undefined;
          });
          expect(checked.typeChecking.expressionWarnings ?? []).toEqual([]);
        } else expect(stored.body.status ?? {}).toEqual({});
      } finally {
        await server.api('DELETE', `${VAPB}/${name}`);
        await server.api('DELETE', `${VAP}/${name}`);
        await server.api('DELETE', `${rbac}/clusterrolebindings/${name}-svc`);
        await server.api('DELETE', `${rbac}/clusterroles/${name}-svc`);
        await server.api('DELETE', `/api/v1/namespaces/${deniedNs}`);
      }
    });
  });
}
