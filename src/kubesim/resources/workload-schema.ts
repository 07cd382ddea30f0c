import { z } from 'zod';
import { conditionSchema, objectMetaSchema, objectSchema, timeSchema } from './meta-schema.js';

/**
 * apps/v1 Deployment, batch/v1 Job, policy/v1 PodDisruptionBudget and networking.k8s.io/v1
 * NetworkPolicy. Their own fields are listed completely (k8s.io/api, Go struct order); the pod
 * template's PodSpec and containers list the fields a chart commonly renders with their types
 * and stay open (`z.looseObject`) for the rest of the very large PodSpec, so unknown-field
 * detection is lenient inside `spec.template.spec` only. Status blocks are written by
 * controllers, which kubesim does not run; they are open as well.
 */

const int = () => z.number().int();
const stringMap = () => z.record(z.string(), z.string());
/** intstr.IntOrString. */
export const intOrStringSchema = z.union([int(), z.string()]);

export const labelSelectorSchema = z.object({
  matchLabels: stringMap().optional(),
  matchExpressions: z
    .array(z.object({ key: z.string(), operator: z.string(), values: z.array(z.string()).optional() }))
    .optional(),
});

const envVarSchema = z.object({
  name: z.string(),
  value: z.string().optional(),
  valueFrom: z
    .object({
      fieldRef: z.object({ apiVersion: z.string().optional(), fieldPath: z.string() }).optional(),
      resourceFieldRef: z
        .object({
          containerName: z.string().optional(),
          resource: z.string(),
          divisor: intOrStringSchema.optional(),
        })
        .optional(),
      configMapKeyRef: z
        .object({ name: z.string().optional(), key: z.string(), optional: z.boolean().optional() })
        .optional(),
      secretKeyRef: z
        .object({ name: z.string().optional(), key: z.string(), optional: z.boolean().optional() })
        .optional(),
    })
    .optional(),
});

const volumeMountSchema = z.looseObject({
  name: z.string(),
  readOnly: z.boolean().optional(),
  mountPath: z.string(),
  subPath: z.string().optional(),
});

export const containerSchema = z.looseObject({
  name: z.string(),
  image: z.string().optional(),
  command: z.array(z.string()).optional(),
  args: z.array(z.string()).optional(),
  workingDir: z.string().optional(),
  ports: z
    .array(
      z.object({
        name: z.string().optional(),
        hostPort: int().optional(),
        containerPort: int(),
        protocol: z.string().optional(),
        hostIP: z.string().optional(),
      }),
    )
    .optional(),
  env: z.array(envVarSchema).optional(),
  volumeMounts: z.array(volumeMountSchema).optional(),
  imagePullPolicy: z.string().optional(),
});

export const volumeSchema = z.looseObject({
  name: z.string(),
  configMap: z
    .looseObject({
      name: z.string().optional(),
      items: z.array(z.looseObject({ key: z.string(), path: z.string() })).optional(),
    })
    .optional(),
  secret: z.looseObject({ secretName: z.string().optional() }).optional(),
  emptyDir: z
    .looseObject({ medium: z.string().optional(), sizeLimit: intOrStringSchema.optional() })
    .optional(),
});

export const podSpecSchema = z.looseObject({
  volumes: z.array(volumeSchema).optional(),
  initContainers: z.array(containerSchema).optional(),
  containers: z.array(containerSchema),
  restartPolicy: z.string().optional(),
  terminationGracePeriodSeconds: int().optional(),
  activeDeadlineSeconds: int().optional(),
  serviceAccountName: z.string().optional(),
  serviceAccount: z.string().optional(),
  automountServiceAccountToken: z.boolean().optional(),
  enableServiceLinks: z.boolean().optional(),
  nodeSelector: stringMap().optional(),
  priorityClassName: z.string().optional(),
});

export const podTemplateSpecSchema = z.object({
  metadata: objectMetaSchema.optional(),
  spec: podSpecSchema.optional(),
});

const openStatus = () => z.looseObject({}).optional();

export const deploymentSpecSchema = z.object({
  replicas: int().optional(),
  selector: labelSelectorSchema.optional(),
  template: podTemplateSpecSchema.optional(),
  strategy: z
    .object({
      type: z.string().optional(),
      rollingUpdate: z
        .object({ maxUnavailable: intOrStringSchema.optional(), maxSurge: intOrStringSchema.optional() })
        .optional(),
    })
    .optional(),
  minReadySeconds: int().optional(),
  revisionHistoryLimit: int().optional(),
  paused: z.boolean().optional(),
  progressDeadlineSeconds: int().optional(),
});
export const deploymentObjectSchema = objectSchema({
  spec: deploymentSpecSchema.optional(),
  status: openStatus(),
});

export const jobSpecSchema = z.object({
  parallelism: int().optional(),
  completions: int().optional(),
  activeDeadlineSeconds: int().optional(),
  podFailurePolicy: z.looseObject({}).optional(),
  successPolicy: z.looseObject({}).optional(),
  backoffLimit: int().optional(),
  backoffLimitPerIndex: int().optional(),
  maxFailedIndexes: int().optional(),
  selector: labelSelectorSchema.optional(),
  manualSelector: z.boolean().optional(),
  template: podTemplateSpecSchema.optional(),
  ttlSecondsAfterFinished: int().optional(),
  completionMode: z.string().optional(),
  suspend: z.boolean().optional(),
  podReplacementPolicy: z.string().optional(),
  managedBy: z.string().optional(),
});
export const jobStatusSchema = z.object({
  conditions: z
    .array(
      conditionSchema.extend({ lastProbeTime: timeSchema.optional() }).omit({ observedGeneration: true }),
    )
    .optional(),
  startTime: timeSchema.optional(),
  completionTime: timeSchema.optional(),
  active: int().optional(),
  succeeded: int().optional(),
  failed: int().optional(),
  terminating: int().optional(),
  completedIndexes: z.string().optional(),
  failedIndexes: z.string().optional(),
  uncountedTerminatedPods: z.looseObject({}).optional(),
  ready: int().optional(),
});
export const jobObjectSchema = objectSchema({
  spec: jobSpecSchema.optional(),
  status: jobStatusSchema.optional(),
});

export const pdbSpecSchema = z.object({
  minAvailable: intOrStringSchema.optional(),
  selector: labelSelectorSchema.optional(),
  maxUnavailable: intOrStringSchema.optional(),
  unhealthyPodEvictionPolicy: z.string().optional(),
});
export const pdbObjectSchema = objectSchema({ spec: pdbSpecSchema.optional(), status: openStatus() });

const peerSchema = z.object({
  podSelector: labelSelectorSchema.optional(),
  namespaceSelector: labelSelectorSchema.optional(),
  ipBlock: z.object({ cidr: z.string(), except: z.array(z.string()).optional() }).optional(),
});
const npPortSchema = z.object({
  protocol: z.string().optional(),
  port: intOrStringSchema.optional(),
  endPort: int().optional(),
});
export const networkPolicySpecSchema = z.object({
  podSelector: labelSelectorSchema.optional(),
  ingress: z
    .array(z.object({ ports: z.array(npPortSchema).optional(), from: z.array(peerSchema).optional() }))
    .optional(),
  egress: z
    .array(z.object({ ports: z.array(npPortSchema).optional(), to: z.array(peerSchema).optional() }))
    .optional(),
  policyTypes: z.array(z.string()).optional(),
});
export const networkPolicyObjectSchema = objectSchema({ spec: networkPolicySpecSchema.optional() });
