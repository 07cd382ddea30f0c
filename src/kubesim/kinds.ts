import { IpAllocator, PortAllocator } from './ipalloc.js';
import {
  validatingAdmissionPolicyBindingResource,
  validatingAdmissionPolicyResource,
} from './resources/admission-policies.js';
import { configMapResource, secretResource, serviceAccountResource } from './resources/config.js';
import { coreEventResource, eventsV1Resource } from './resources/events.js';
import { leaseResource } from './resources/leases.js';
import { namespaceResource } from './resources/namespaces.js';
import {
  clusterRoleBindingResource,
  clusterRoleResource,
  roleBindingResource,
  roleResource,
} from './resources/rbac.js';
import { apiVersionOf, Registry, type ResourceDef } from './resources/registry.js';
import { podResource } from './resources/pods.js';
import { reviewResources } from './resources/reviews.js';
import { serviceResource } from './resources/services.js';
import {
  deploymentResource,
  jobResource,
  networkPolicyResource,
  podDisruptionBudgetResource,
} from './resources/workloads.js';

/** Every kind kubesim serves, registered in discovery order (core first, then each group). */
export function buildRegistry(ips: IpAllocator, ports: PortAllocator, opts: { pods?: boolean } = {}) {
  const registry = new Registry();
  const deployments = deploymentResource();
  const jobs = jobResource();
  // Pods are served only with process-backed workloads: nothing runs them otherwise.
  const pods = opts.pods ? podResource() : undefined;
  const namespaces = namespaceResource();
  const serviceAccounts = serviceAccountResource();
  const rbac = {
    roles: roleResource(),
    clusterRoles: clusterRoleResource(),
    roleBindings: roleBindingResource(),
    clusterRoleBindings: clusterRoleBindingResource(),
  };
  const policies = {
    policies: validatingAdmissionPolicyResource(),
    bindings: validatingAdmissionPolicyBindingResource(),
  };
  for (const def of [
    namespaces,
    serviceResource(ips, ports),
    ...(pods ? [pods] : []),
    coreEventResource(),
    leaseResource(),
    eventsV1Resource(),
    serviceAccounts,
    secretResource(),
    configMapResource(),
    ...Object.values(rbac),
    deployments,
    jobs,
    podDisruptionBudgetResource(),
    networkPolicyResource(),
    policies.policies,
    policies.bindings,
    ...reviewResources(),
  ])
    registry.add(def);
  return { registry, namespaces, serviceAccounts, rbac, policies, deployments, jobs, pods };
}

/** One served resource as `kubectl api-resources` would show it. */
export interface ServedKind {
  resource: string;
  apiVersion: string;
  kind: string;
  namespaced: boolean;
  verbs: readonly string[];
}

/** The kinds kubesim serves, from the registry itself (for `endpoint-binder kubesim --help`). */
export function servedKinds(): ServedKind[] {
  const { registry } = buildRegistry(new IpAllocator('10.96.0.0/12'), new PortAllocator());
  return registry.all().map((d: ResourceDef) => ({
    resource: d.statusSubresource ? `${d.plural} (+status)` : d.plural,
    apiVersion: apiVersionOf(d),
    kind: d.kind,
    namespaced: d.namespaced,
    verbs: d.verbs,
  }));
}
