import {
  CoreV1Api,
  RbacAuthorizationV1Api,
  type KubeConfig,
  type V1PolicyRule,
} from '@kubernetes/client-node';

/**
 * The demo's controller runs as the chart's controller ServiceAccount with the chart's rules
 * (charts/endpoint-binder/templates/rbac.yaml, bindings enabled, leader election on), not as
 * kubesim's admin: so `endpoint-binder check` against `npm start` reviews the same rights it
 * reviews on a cluster, and passes for the same reason. Returns the account's name.
 */
export async function createControllerAccount(
  admin: KubeConfig,
  opts: { namespace: string; release: string },
): Promise<string> {
  const name = `${opts.release}-controller`;
  const labels = { 'app.kubernetes.io/instance': opts.release, 'app.kubernetes.io/component': 'controller' };
  const subjects = [{ kind: 'ServiceAccount', name, namespace: opts.namespace }];
  const roleRef = (kind: string, ref: string) => ({ apiGroup: 'rbac.authorization.k8s.io', kind, name: ref });
  const cluster: V1PolicyRule[] = [
    {
      apiGroups: [''],
      resources: ['services'],
      verbs: ['get', 'list', 'watch', 'create', 'update', 'delete'],
    },
    { apiGroups: [''], resources: ['namespaces'], verbs: ['get', 'list', 'watch'] },
    { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] },
  ];
  const namespaced: V1PolicyRule[] = [
    {
      apiGroups: ['coordination.k8s.io'],
      resources: ['leases'],
      resourceNames: [`${opts.release}-controller`],
      verbs: ['get', 'update'],
    },
    { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] },
    {
      apiGroups: [''],
      resources: ['configmaps'],
      resourceNames: [`${opts.release}-install`],
      verbs: ['get', 'list', 'watch', 'update', 'patch'],
    },
    { apiGroups: [''], resources: ['configmaps'], verbs: ['create'] },
  ];
  const core = admin.makeApiClient(CoreV1Api);
  const rbac = admin.makeApiClient(RbacAuthorizationV1Api);
  const ns = opts.namespace;
  await core.createNamespacedServiceAccount({ namespace: ns, body: { metadata: { name, labels } } });
  await rbac.createClusterRole({ body: { metadata: { name: `${ns}-${name}`, labels }, rules: cluster } });
  await rbac.createClusterRoleBinding({
    body: {
      metadata: { name: `${ns}-${name}`, labels },
      roleRef: roleRef('ClusterRole', `${ns}-${name}`),
      subjects,
    },
  });
  await rbac.createNamespacedRole({ namespace: ns, body: { metadata: { name, labels }, rules: namespaced } });
  await rbac.createNamespacedRoleBinding({
    namespace: ns,
    body: { metadata: { name, labels }, roleRef: roleRef('Role', name), subjects },
  });
  return name;
}
