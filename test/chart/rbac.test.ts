import { describe, expect, it } from 'vitest';
import { api, useSim } from '../kubesim/helpers.js';
import { REQUIRED, helmTool, render } from './helm.js';
import { kubesimRulesFor } from './rbac.js';
import { renderForTarget } from '../e2e/chart-configs.js';

if ('skip' in helmTool) process.stdout.write(`helm chart RBAC tests skipped: ${helmTool.skip}\n`);

const SA = {
  controller: { name: 'eb-endpoint-binder-controller', namespace: 'ops' },
  forwarder: { name: 'eb-endpoint-binder-forwarder', namespace: 'ops' },
  uninstall: { name: 'eb-endpoint-binder-uninstall', namespace: 'ops' },
};

describe.skipIf('skip' in helmTool)('RBAC: least privilege', () => {
  it('grants each service account exactly the rules its code uses', async () => {
    const objs = await render(REQUIRED);
    expect(kubesimRulesFor(objs, SA.controller)).toEqual([
      {
        apiGroups: [''],
        resources: ['services'],
        verbs: ['get', 'list', 'watch', 'create', 'update', 'delete'],
      },
      { apiGroups: [''], resources: ['namespaces'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] },
      {
        apiGroups: ['coordination.k8s.io'],
        resources: ['leases'],
        verbs: ['get', 'update'],
        namespaces: ['ops'],
        resourceNames: ['eb-controller'],
      },
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'], namespaces: ['ops'] },
      // The install record (#15 item 4): only the controller writes it, only that name; every
      // replica watches it for the list of internal Services (#18 item 3).
      {
        apiGroups: [''],
        resources: ['configmaps'],
        verbs: ['get', 'list', 'watch', 'update', 'patch'],
        namespaces: ['ops'],
        resourceNames: ['eb-install'],
      },
      { apiGroups: [''], resources: ['configmaps'], verbs: ['create'], namespaces: ['ops'] },
      // `endpoint-binder check` in the controller's pod reads the forwarder pods' readiness
      // (test/real/product.real.ts runs it with the controller's token on a real API server).
      { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'], namespaces: ['ops'] },
    ]);
    expect(kubesimRulesFor(objs, SA.forwarder)).toEqual([
      { apiGroups: [''], resources: ['services'], verbs: ['get', 'list', 'watch'], namespaces: ['ops'] },
      {
        apiGroups: [''],
        resources: ['configmaps'],
        verbs: ['get', 'list', 'watch'],
        namespaces: ['ops'],
        resourceNames: ['eb-install'],
      },
      { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'], namespaces: ['ops'] },
    ]);
    expect(kubesimRulesFor(objs, SA.uninstall)).toEqual([
      { apiGroups: [''], resources: ['services'], verbs: ['get', 'list', 'delete', 'update'] },
      {
        apiGroups: ['coordination.k8s.io'],
        resources: ['leases'],
        verbs: ['get', 'update'],
        namespaces: ['ops'],
        resourceNames: ['eb-controller'],
      },
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'], namespaces: ['ops'] },
    ]);
  });

  it('names the Lease after the release, not the resource prefix', async () => {
    const objs = await render({ ...REQUIRED, fullnameOverride: 'binder' }, { release: 'shop' });
    const rules = kubesimRulesFor(objs, { name: 'binder-controller', namespace: 'ops' });
    expect(rules.find((r) => r.resourceNames)?.resourceNames).toEqual(['shop-controller']);
  });

  it('grants no lease rights without leader election, and no cluster roles that clash between namespaces', async () => {
    const noLe = await render({
      ...REQUIRED,
      controller: { replicas: 1, leaderElection: { enabled: false } },
    });
    expect(kubesimRulesFor(noLe, SA.controller).some((r) => r.resources.includes('leases'))).toBe(false);
    const a = await render(REQUIRED, { namespace: 'team-a' });
    const b = await render(REQUIRED, { namespace: 'team-b' });
    const clusterNames = (objs: typeof a) =>
      objs.filter((o) => o.kind.startsWith('Cluster')).map((o) => `${o.kind}/${o.metadata.name}`);
    const shared = clusterNames(a).filter((n) => clusterNames(b).includes(n));
    expect(shared).toEqual([]);
  });

  it('renders no RBAC when rbac.create is false', async () => {
    const objs = await render({ ...REQUIRED, rbac: { create: false } });
    expect(objs.filter((o) => /Role/.test(o.kind))).toEqual([]);
  });
});

describe.skipIf('skip' in helmTool)('RBAC against kubesim’s authorizer', () => {
  const sim = useSim();

  it('lets each component do its job and nothing next to it', async () => {
    const objs = await render(REQUIRED);
    const s = await sim({
      initialNamespaces: ['default', 'ops', 'apps'],
      tokens: [
        {
          token: 'controller',
          user: 'system:serviceaccount:ops:controller',
          rules: kubesimRulesFor(objs, SA.controller),
        },
        {
          token: 'forwarder',
          user: 'system:serviceaccount:ops:forwarder',
          rules: kubesimRulesFor(objs, SA.forwarder),
        },
        {
          token: 'uninstall',
          user: 'system:serviceaccount:ops:uninstall',
          rules: kubesimRulesFor(objs, SA.uninstall),
        },
      ],
    });
    const svc = (name: string) => ({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name },
      spec: { type: 'ExternalName', externalName: 'x.ops.svc.cluster.local' },
    });
    const lease = (name: string) => ({
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name },
      spec: {},
    });
    const event = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'web.1' },
      involvedObject: { kind: 'Service', namespace: 'apps', name: 'web' },
      reason: 'Projected',
      message: 'm',
      type: 'Normal',
    };
    const as = (token: string, method: string, path: string, body?: unknown) =>
      api(s, method, path, body, { token }).then((r) => r.status);

    // controller
    expect(await as('controller', 'GET', '/api/v1/services')).toBe(200);
    expect(await as('controller', 'POST', '/api/v1/namespaces/apps/services', svc('web'))).toBe(201);
    expect(await as('controller', 'PATCH', '/api/v1/namespaces/apps/services/web', {})).toBe(403);
    expect(await as('controller', 'GET', '/api/v1/namespaces')).toBe(200);
    expect(await as('controller', 'POST', '/api/v1/namespaces', { metadata: { name: 'new' } })).toBe(403);
    expect(
      await as(
        'controller',
        'POST',
        '/apis/coordination.k8s.io/v1/namespaces/ops/leases',
        lease('eb-controller'),
      ),
    ).toBe(201);
    expect(
      await as('controller', 'GET', '/apis/coordination.k8s.io/v1/namespaces/ops/leases/eb-controller'),
    ).toBe(200);
    expect(await as('controller', 'GET', '/apis/coordination.k8s.io/v1/namespaces/ops/leases/other')).toBe(
      403,
    );
    expect(
      await as('controller', 'GET', '/apis/coordination.k8s.io/v1/namespaces/apps/leases/eb-controller'),
    ).toBe(403);
    expect(await as('controller', 'POST', '/api/v1/namespaces/apps/events', event)).toBe(201);

    // forwarder
    expect(await as('forwarder', 'GET', '/api/v1/namespaces/ops/services')).toBe(200);
    expect(await as('forwarder', 'GET', '/api/v1/namespaces/apps/services')).toBe(403);
    expect(await as('forwarder', 'GET', '/api/v1/services')).toBe(403);
    expect(await as('forwarder', 'POST', '/api/v1/namespaces/ops/services', svc('x'))).toBe(403);

    // uninstall
    expect(await as('uninstall', 'GET', '/api/v1/services')).toBe(200);
    expect(await as('uninstall', 'POST', '/api/v1/namespaces/apps/services', svc('y'))).toBe(403);
    expect(await as('uninstall', 'DELETE', '/api/v1/namespaces/apps/services/web')).toBe(200);
  });
});

describe.skipIf('skip' in helmTool)('renderForTarget (for a local-process e2e target)', () => {
  it('extracts the config files and each component’s rules from the chart', async () => {
    const r = await renderForTarget(
      { ...REQUIRED, bindings: { endpointSelector: 'endpoint.port == 80' } },
      {
        release: 'eb',
        namespace: 'ops',
      },
    );
    expect(r.controllerYaml).toContain('endpointSelector: endpoint.port == 80');
    expect(r.forwarderYaml).toContain('releaseName: eb');
    expect(r.rules.forwarder).toEqual([
      { apiGroups: [''], resources: ['services'], verbs: ['get', 'list', 'watch'], namespaces: ['ops'] },
      {
        apiGroups: [''],
        resources: ['configmaps'],
        verbs: ['get', 'list', 'watch'],
        namespaces: ['ops'],
        resourceNames: ['eb-install'],
      },
      { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'], namespaces: ['ops'] },
    ]);
    expect(r.rules.uninstall[0]?.verbs).toEqual(['get', 'list', 'delete', 'update']);
    expect(r.rules.controller.length).toBe(8);
  });
});
