import type { z } from 'zod';
import { bindingObjectSchema, policyObjectSchema } from '../resources/admission-schema.js';
import {
  selfSubjectAccessReviewSchema,
  selfSubjectReviewSchema,
  selfSubjectRulesReviewSchema,
  subjectAccessReviewSchema,
} from '../resources/review-schema.js';
import {
  configMapObjectSchema,
  secretObjectSchema,
  serviceAccountObjectSchema,
} from '../resources/config-schema.js';
import {
  clusterRoleObjectSchema,
  roleBindingObjectSchema,
  roleObjectSchema,
} from '../resources/rbac-schema.js';
import {
  deploymentObjectSchema,
  jobObjectSchema,
  networkPolicyObjectSchema,
  pdbObjectSchema,
} from '../resources/workload-schema.js';
import { podObjectSchema } from '../resources/pod-schema.js';
import { KIND_MODELS, kindModel, listModel } from './models.js';

/**
 * OpenAPI models of the kinds a chart installs (ServiceAccounts, Secrets, ConfigMaps, RBAC,
 * Deployments, Jobs, PodDisruptionBudgets, NetworkPolicies), built from their resource schemas
 * (resources/*-schema.ts) under the real names, without the prose descriptions. Documenting them
 * matters to clients: kubectl and helm leave validation to the server (fieldValidation) only for
 * kinds the v3 document describes, and fall back to the protobuf-only /openapi/v2 otherwise.
 */

type ObjectShape = z.ZodObject<z.ZodRawShape>;

function stored(
  pkg: string,
  group: string,
  version: string,
  kind: string,
  schema: ObjectShape,
  description: string,
): { object: z.ZodType; list: z.ZodType } {
  const { apiVersion: _a, kind: _k, metadata: _m, ...shape } = schema.shape;
  const object = kindModel(
    `io.k8s.api.${pkg}.${version}.${kind}`,
    { group, version, kind },
    shape,
    description,
  );
  const list = listModel(
    `io.k8s.api.${pkg}.${version}.${kind}List`,
    { group, version, kind: `${kind}List` },
    object,
    `${kind} objects`,
  );
  return { object, list };
}

const RBAC = 'rbac.authorization.k8s.io';
const ADMISSION = 'admissionregistration.k8s.io';

export const STORED_KIND_MODELS: Readonly<Record<string, { object: z.ZodType; list: z.ZodType }>> = {
  '/v1/ServiceAccount': stored(
    'core',
    '',
    'v1',
    'ServiceAccount',
    serviceAccountObjectSchema,
    'ServiceAccount binds together a name, a principal that can be authenticated and authorized, and a set of secrets.',
  ),
  '/v1/Secret': stored(
    'core',
    '',
    'v1',
    'Secret',
    secretObjectSchema,
    'Secret holds secret data of a certain type.',
  ),
  '/v1/ConfigMap': stored(
    'core',
    '',
    'v1',
    'ConfigMap',
    configMapObjectSchema,
    'ConfigMap holds configuration data for pods to consume.',
  ),
  [`${RBAC}/v1/Role`]: stored(
    'rbac',
    RBAC,
    'v1',
    'Role',
    roleObjectSchema,
    'Role is a namespaced, logical grouping of PolicyRules.',
  ),
  [`${RBAC}/v1/ClusterRole`]: stored(
    'rbac',
    RBAC,
    'v1',
    'ClusterRole',
    clusterRoleObjectSchema,
    'ClusterRole is a cluster level, logical grouping of PolicyRules.',
  ),
  [`${RBAC}/v1/RoleBinding`]: stored(
    'rbac',
    RBAC,
    'v1',
    'RoleBinding',
    roleBindingObjectSchema,
    'RoleBinding references a role, but does not contain it.',
  ),
  [`${RBAC}/v1/ClusterRoleBinding`]: stored(
    'rbac',
    RBAC,
    'v1',
    'ClusterRoleBinding',
    roleBindingObjectSchema,
    'ClusterRoleBinding references a ClusterRole, but not contain it.',
  ),
  // Documented only where served: with process-backed workloads (podRunner).
  '/v1/Pod': stored(
    'core',
    '',
    'v1',
    'Pod',
    podObjectSchema,
    'Pod is a collection of containers that can run on a host.',
  ),
  'apps/v1/Deployment': stored(
    'apps',
    'apps',
    'v1',
    'Deployment',
    deploymentObjectSchema,
    'Deployment enables declarative updates for Pods and ReplicaSets.',
  ),
  'batch/v1/Job': stored(
    'batch',
    'batch',
    'v1',
    'Job',
    jobObjectSchema,
    'Job represents the configuration of a single job.',
  ),
  'policy/v1/PodDisruptionBudget': stored(
    'policy',
    'policy',
    'v1',
    'PodDisruptionBudget',
    pdbObjectSchema,
    'PodDisruptionBudget is an object to define the max disruption that can be caused to a collection of pods',
  ),
  'networking.k8s.io/v1/NetworkPolicy': stored(
    'networking',
    'networking.k8s.io',
    'v1',
    'NetworkPolicy',
    networkPolicyObjectSchema,
    'NetworkPolicy describes what network traffic is allowed for a set of Pods',
  ),
  [`${ADMISSION}/v1/ValidatingAdmissionPolicy`]: stored(
    'admissionregistration',
    ADMISSION,
    'v1',
    'ValidatingAdmissionPolicy',
    policyObjectSchema,
    'ValidatingAdmissionPolicy describes the definition of an admission validation policy that accepts or rejects an object without changing it.',
  ),
  [`${ADMISSION}/v1/ValidatingAdmissionPolicyBinding`]: stored(
    'admissionregistration',
    ADMISSION,
    'v1',
    'ValidatingAdmissionPolicyBinding',
    bindingObjectSchema,
    'ValidatingAdmissionPolicyBinding binds the ValidatingAdmissionPolicy with paramerized resources.',
  ),
  'authorization.k8s.io/v1/SubjectAccessReview': stored(
    'authorization',
    'authorization.k8s.io',
    'v1',
    'SubjectAccessReview',
    subjectAccessReviewSchema,
    'SubjectAccessReview checks whether or not a user or group can perform an action.',
  ),
  'authorization.k8s.io/v1/SelfSubjectAccessReview': stored(
    'authorization',
    'authorization.k8s.io',
    'v1',
    'SelfSubjectAccessReview',
    selfSubjectAccessReviewSchema,
    'SelfSubjectAccessReview checks whether or the current user can perform an action.',
  ),
  'authorization.k8s.io/v1/SelfSubjectRulesReview': stored(
    'authorization',
    'authorization.k8s.io',
    'v1',
    'SelfSubjectRulesReview',
    selfSubjectRulesReviewSchema,
    'SelfSubjectRulesReview enumerates the set of actions the current user can perform within a namespace.',
  ),
  'authentication.k8s.io/v1/SelfSubjectReview': stored(
    'authentication',
    'authentication.k8s.io',
    'v1',
    'SelfSubjectReview',
    selfSubjectReviewSchema,
    'SelfSubjectReview contains the user information that the kube-apiserver has about the user making this request.',
  ),
};

/** Every documented kind, keyed `group/version/Kind`. */
export const ALL_KIND_MODELS = { ...KIND_MODELS, ...STORED_KIND_MODELS };
