import { describe, expect, it } from 'vitest';
import { eventually, type FidelityServer, type Res } from './server.js';

/**
 * RBAC with ServiceAccount tokens (Role/RoleBinding, resourceNames with get/list/watch, ClusterRole
 * aggregation), the access reviews, and impersonation headers.
 */
export function defineRbac(server: FidelityServer): void {
  describe('RBAC, reviews and impersonation', () => {
    const rbac = '/apis/rbac.authorization.k8s.io/v1';
    /** A ServiceAccount in a fresh namespace and its token. */
    const account = async (name = 'bot') => {
      const ns = await server.namespace();
      const sa = await server.api('POST', `/api/v1/namespaces/${ns}/serviceaccounts`, { metadata: { name } });
      expect(sa.status, JSON.stringify(sa.body)).toBe(201);
      return {
        ns,
        user: `system:serviceaccount:${ns}:${name}`,
        token: await server.serviceAccountToken(ns, name),
      };
    };
    /** A Role with these rules, bound to the ServiceAccount `bot` of the namespace. */
    const grant = async (ns: string, name: string, rules: Record<string, unknown>[]) => {
      await server.api('POST', `${rbac}/namespaces/${ns}/roles`, { metadata: { name }, rules });
      await server.api('POST', `${rbac}/namespaces/${ns}/rolebindings`, {
        metadata: { name },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
        subjects: [{ kind: 'ServiceAccount', name: 'bot', namespace: ns }],
      });
    };
    /** RBAC caches on a real server: a new grant shows after a moment. */
    const until = (what: string, call: () => Promise<Res>, status: number) =>
      eventually(
        what,
        async () => {
          const r = await call();
          return r.status === status ? r : undefined;
        },
        15_000,
      );

    it('a ServiceAccount token is denied until a RoleBinding grants, with the authorizer wording', async () => {
      const { ns, user, token } = await account();
      const denied = await server.api('GET', `/api/v1/namespaces/${ns}/services`, undefined, { token });
      expect(denied.status).toBe(403);
      expect(denied.body).toEqual({
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: `services is forbidden: User "${user}" cannot list resource "services" in API group "" in the namespace "${ns}"`,
        reason: 'Forbidden',
        details: { kind: 'services' },
        code: 403,
      });
      const cluster = await server.api('GET', '/api/v1/services', undefined, { token });
      expect(cluster.body.message).toBe(
        `services is forbidden: User "${user}" cannot list resource "services" in API group "" at the cluster scope`,
      );
      const named = await server.api('GET', `/api/v1/namespaces/${ns}/services/web`, undefined, { token });
      expect(named.body.details).toEqual({ name: 'web', kind: 'services' });
      await grant(ns, 'svc', [{ apiGroups: [''], resources: ['services'], verbs: ['list'] }]);
      await until(
        'the list allowed',
        () => server.api('GET', `/api/v1/namespaces/${ns}/services`, undefined, { token }),
        200,
      );
      const other = await server.namespace();
      expect(
        (await server.api('GET', `/api/v1/namespaces/${other}/services`, undefined, { token })).status,
      ).toBe(403);
      const unknown = await server.api('GET', `/api/v1/namespaces/${ns}/services`, undefined, {
        token: 'nope',
      });
      expect(unknown.status).toBe(401);
      expect(unknown.body).toMatchObject({ reason: 'Unauthorized', message: 'Unauthorized', code: 401 });
    });

    it('resourceNames allow get, and list or watch by metadata.name, never a plain list', async () => {
      const { ns, token } = await account();
      for (const name of ['mine', 'theirs'])
        await server.api('POST', `/api/v1/namespaces/${ns}/configmaps`, { metadata: { name } });
      await grant(ns, 'one', [
        {
          apiGroups: [''],
          resources: ['configmaps'],
          resourceNames: ['mine'],
          verbs: ['get', 'list', 'watch'],
        },
      ]);
      const cm = `/api/v1/namespaces/${ns}/configmaps`;
      await until('get mine', () => server.api('GET', `${cm}/mine`, undefined, { token }), 200);
      expect((await server.api('GET', `${cm}/theirs`, undefined, { token })).status).toBe(403);
      expect((await server.api('GET', cm, undefined, { token })).status).toBe(403);
      const byName = await server.api('GET', `${cm}?fieldSelector=metadata.name%3Dmine`, undefined, {
        token,
      });
      expect(byName.status).toBe(200);
      expect(byName.body.items.map((i: { metadata: { name: string } }) => i.metadata.name)).toEqual(['mine']);
      expect(
        (await server.api('GET', `${cm}?fieldSelector=metadata.name%3Dtheirs`, undefined, { token })).status,
      ).toBe(403);
      const w = await server.watch(`${cm}?watch=true&fieldSelector=metadata.name%3Dmine`, { token });
      expect(w.status).toBe(200);
      await w.waitFor((evs) => evs.length >= 1, 'ADDED mine');
      w.close();
      expect(w.events.map((e) => `${e.type} ${e.object.metadata.name}`)).toEqual(['ADDED mine']);
    });

    it('an aggregated ClusterRole gets the rules of the roles its selector matches, and grants them', async () => {
      const { ns, token } = await account();
      const label = `fidelity.test/agg-${ns}`;
      await server.api('POST', `${rbac}/clusterroles`, {
        metadata: { name: `${ns}-agg` },
        aggregationRule: { clusterRoleSelectors: [{ matchLabels: { [label]: 'true' } }] },
        rules: [],
      });
      await server.api('POST', `${rbac}/clusterroles`, {
        metadata: { name: `${ns}-part-b`, labels: { [label]: 'true' } },
        rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['list'] }],
      });
      await server.api('POST', `${rbac}/clusterroles`, {
        metadata: { name: `${ns}-part-a`, labels: { [label]: 'true' } },
        rules: [
          { apiGroups: [''], resources: ['services'], verbs: ['get'] },
          { apiGroups: [''], resources: ['configmaps'], verbs: ['list'] },
        ],
      });
      await server.api('POST', `${rbac}/namespaces/${ns}/rolebindings`, {
        metadata: { name: 'agg' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: `${ns}-agg` },
        subjects: [{ kind: 'ServiceAccount', name: 'bot', namespace: ns }],
      });
      try {
        await until(
          'the aggregated rule',
          () => server.api('GET', `/api/v1/namespaces/${ns}/configmaps`, undefined, { token }),
          200,
        );
        // In name order (part-a, then part-b), without the duplicate.
        const agg = await server.api('GET', `${rbac}/clusterroles/${ns}-agg`);
        expect(agg.body.rules).toEqual([
          { apiGroups: [''], resources: ['services'], verbs: ['get'] },
          { apiGroups: [''], resources: ['configmaps'], verbs: ['list'] },
        ]);
        // A part that goes away takes its rules with it.
        await server.api('DELETE', `${rbac}/clusterroles/${ns}-part-a`);
        await eventually('the rules shrunk', async () => {
          const r = await server.api('GET', `${rbac}/clusterroles/${ns}-agg`);
          return r.body.rules?.length === 1 ? r : undefined;
        });
      } finally {
        for (const n of ['agg', 'part-a', 'part-b'])
          await server.api('DELETE', `${rbac}/clusterroles/${ns}-${n}`);
      }
    });

    it('SelfSubjectAccessReview answers for the caller, with the RBAC reason', async () => {
      const { ns, user, token } = await account();
      await grant(ns, 'svc', [{ apiGroups: [''], resources: ['services'], verbs: ['get'] }]);
      const ssar = (verb: string) =>
        server.api(
          'POST',
          '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews',
          {
            apiVersion: 'authorization.k8s.io/v1',
            kind: 'SelfSubjectAccessReview',
            spec: { resourceAttributes: { namespace: ns, verb, resource: 'services' } },
          },
          { token },
        );
      const yes = await eventually('allowed', async () => {
        const r = await ssar('get');
        return r.body.status?.allowed ? r : undefined;
      });
      expect(yes.status).toBe(201);
      expect(yes.body.status).toEqual({
        allowed: true,
        reason: `RBAC: allowed by RoleBinding "svc/${ns}" of Role "svc" to ServiceAccount "bot/${ns}"`,
      });
      const no = await ssar('delete');
      expect(no.body.status).toEqual({ allowed: false });
      const who = await server.api(
        'POST',
        '/apis/authentication.k8s.io/v1/selfsubjectreviews',
        { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
        { token },
      );
      expect(who.status).toBe(201);
      expect(who.body.status.userInfo.username).toBe(user);
      expect(who.body.status.userInfo.groups).toEqual([
        'system:serviceaccounts',
        `system:serviceaccounts:${ns}`,
        'system:authenticated',
      ]);
      const both = await server.api(
        'POST',
        '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews',
        { spec: {} },
        { token },
      );
      expect(both.status).toBe(422);
      expect(both.body.message).toBe(
        // Sic: the real server names no kind here, and prints null bare.
        '.authorization.k8s.io "" is invalid: spec.resourceAttributes: Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified',
      );
    });

    it('SubjectAccessReview answers for the user and groups in its spec, exactly as given', async () => {
      const { ns, user } = await account();
      await grant(ns, 'svc', [{ apiGroups: [''], resources: ['services'], verbs: ['list'] }]);
      const sar = (spec: Record<string, unknown>) =>
        server.api('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SubjectAccessReview',
          spec,
        });
      const attrs = { resourceAttributes: { namespace: ns, verb: 'list', resource: 'services' } };
      const r = await eventually('allowed', async () => {
        const x = await sar({ user, ...attrs });
        return x.body.status?.allowed ? x : undefined;
      });
      expect(r.status).toBe(201);
      expect(r.body).toMatchObject({ kind: 'SubjectAccessReview', apiVersion: 'authorization.k8s.io/v1' });
      expect(r.body.spec).toEqual({ user, ...attrs });
      expect(r.body.status).toEqual({
        allowed: true,
        reason: `RBAC: allowed by RoleBinding "svc/${ns}" of Role "svc" to ServiceAccount "bot/${ns}"`,
      });
      const other = await sar({ user: 'nobody', ...attrs });
      expect(other.body.status).toEqual({ allowed: false });
      // Groups are taken as given: system:masters in the spec is allowed everything.
      const masters = await sar({ user: 'nobody', groups: ['system:masters'], ...attrs });
      expect(masters.body.status.allowed).toBe(true);
      const nobody = await sar(attrs);
      expect(nobody.status).toBe(422);
      expect(nobody.body.message).toBe(
        '.authorization.k8s.io "" is invalid: spec.user: Invalid value: "": at least one of user or group must be specified',
      );
      // The caller needs the right to create the review.
      const { token } = await account('asker');
      const denied = await server.api(
        'POST',
        '/apis/authorization.k8s.io/v1/subjectaccessreviews',
        { spec: { user, ...attrs } },
        { token },
      );
      expect(denied.status).toBe(403);
      expect(denied.body.message).toMatch(
        /^subjectaccessreviews\.authorization\.k8s\.io is forbidden: User ".*" cannot create resource "subjectaccessreviews" in API group "authorization\.k8s\.io" at the cluster scope$/,
      );
    });

    it('impersonation: the admin acts as the ServiceAccount; without the right it is 403; groups without a user 500', async () => {
      const { ns, user, token } = await account();
      const as = await server.api('GET', `/api/v1/namespaces/${ns}/services`, undefined, {
        headers: { 'Impersonate-User': user },
      });
      expect(as.status).toBe(403);
      expect(as.body.message).toBe(
        `services is forbidden: User "${user}" cannot list resource "services" in API group "" in the namespace "${ns}"`,
      );
      const who = await server.api(
        'POST',
        '/apis/authentication.k8s.io/v1/selfsubjectreviews',
        { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
        { headers: { 'Impersonate-User': 'jane', 'Impersonate-Group': 'devs' } },
      );
      expect(who.body.status.userInfo).toEqual({
        username: 'jane',
        groups: ['devs', 'system:authenticated'],
      });
      const denied = await server.api('GET', `/api/v1/namespaces/${ns}/services`, undefined, {
        token,
        headers: { 'Impersonate-User': 'jane' },
      });
      expect(denied.status).toBe(403);
      expect(denied.body).toMatchObject({
        reason: 'Forbidden',
        message: `users "jane" is forbidden: User "${user}" cannot impersonate resource "users" in API group "" at the cluster scope`,
        details: { name: 'jane', kind: 'users' },
      });
      const noUser = await server.api('GET', `/api/v1/namespaces/${ns}/services`, undefined, {
        headers: { 'Impersonate-Group': 'devs' },
      });
      expect(noUser.status).toBe(500);
      expect(noUser.body).toBe(
        `Internal Server Error: "/api/v1/namespaces/${ns}/services": requested [{Group  devs    }] without impersonating a user\n`,
      );
    });
  });
}
