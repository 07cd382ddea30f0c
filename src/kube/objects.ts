import { z } from 'zod';

/**
 * zod schemas for the Kubernetes objects this project reads. Only the fields we use are declared;
 * every object is a loose object, so unknown fields are kept (and sent back on update).
 */

export const ObjectMetaSchema = z.looseObject({
  name: z.string(),
  namespace: z.string().optional(),
  uid: z.string().optional(),
  resourceVersion: z.string().optional(),
  generation: z.number().optional(),
  creationTimestamp: z.string().optional(),
  deletionTimestamp: z.string().optional(),
  labels: z.record(z.string(), z.string()).optional(),
  annotations: z.record(z.string(), z.string()).optional(),
});
export type ObjectMeta = z.infer<typeof ObjectMetaSchema>;

/** The least every cached object has: a name, maybe a namespace, an opaque resourceVersion. */
export const KubeObjectSchema = z.looseObject({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  metadata: ObjectMetaSchema,
});
export type KubeObject = z.infer<typeof KubeObjectSchema>;

const IntOrString = z.union([z.number().int(), z.string()]);

export const ServicePortSchema = z.looseObject({
  name: z.string().optional(),
  protocol: z.string().optional(),
  port: z.number().int(),
  targetPort: IntOrString.optional(),
  nodePort: z.number().int().optional(),
  appProtocol: z.string().optional(),
});
export type ServicePort = z.infer<typeof ServicePortSchema>;

export const ServiceSchema = z.looseObject({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  metadata: ObjectMetaSchema,
  spec: z
    .looseObject({
      type: z.string().optional(),
      selector: z.record(z.string(), z.string()).optional(),
      ports: z.array(ServicePortSchema).optional(),
      externalName: z.string().optional(),
      clusterIP: z.string().optional(),
    })
    .optional(),
});
export type Service = z.infer<typeof ServiceSchema>;

export const NamespaceSchema = z.looseObject({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  metadata: ObjectMetaSchema,
  status: z.looseObject({ phase: z.string().optional() }).optional(),
});
export type Namespace = z.infer<typeof NamespaceSchema>;

export const ConfigMapSchema = z.looseObject({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  metadata: ObjectMetaSchema,
  data: z.record(z.string(), z.string()).optional(),
});
export type ConfigMap = z.infer<typeof ConfigMapSchema>;

export const LeaseSpecSchema = z.looseObject({
  holderIdentity: z.string().nullish(),
  leaseDurationSeconds: z.number().int().nullish(),
  acquireTime: z.string().nullish(),
  renewTime: z.string().nullish(),
  leaseTransitions: z.number().int().nullish(),
});
export type LeaseSpec = z.infer<typeof LeaseSpecSchema>;

export const LeaseSchema = z.looseObject({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  metadata: ObjectMetaSchema,
  spec: LeaseSpecSchema.optional(),
});
export type Lease = z.infer<typeof LeaseSchema>;

export const ObjectReferenceSchema = z.looseObject({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  namespace: z.string().optional(),
  name: z.string().optional(),
  uid: z.string().optional(),
  resourceVersion: z.string().optional(),
  fieldPath: z.string().optional(),
});
export type ObjectReference = z.infer<typeof ObjectReferenceSchema>;

/** core/v1 Event. */
export const EventSchema = z.looseObject({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  metadata: ObjectMetaSchema,
  involvedObject: ObjectReferenceSchema,
  reason: z.string().optional(),
  message: z.string().optional(),
  type: z.string().optional(),
  count: z.number().int().optional(),
  firstTimestamp: z.string().nullish(),
  lastTimestamp: z.string().nullish(),
  source: z.looseObject({ component: z.string().optional(), host: z.string().optional() }).optional(),
  reportingComponent: z.string().optional(),
  reportingInstance: z.string().optional(),
});

/** metav1.Status, the body of every API error (and of in-stream watch ERROR events). */
export const StatusSchema = z.looseObject({
  kind: z.literal('Status').optional(),
  status: z.string().optional(),
  message: z.string().optional(),
  reason: z.string().optional(),
  code: z.number().int().optional(),
  details: z
    .looseObject({
      name: z.string().optional(),
      kind: z.string().optional(),
      retryAfterSeconds: z.number().optional(),
      causes: z
        .array(
          z.looseObject({
            type: z.string().optional(),
            message: z.string().optional(),
            field: z.string().optional(),
          }),
        )
        .optional(),
    })
    .optional(),
});
export type Status = z.infer<typeof StatusSchema>;

/** The envelope of a list response; items are validated one by one by the caller. */
export const ListSchema = z.looseObject({
  metadata: z
    .looseObject({
      resourceVersion: z.string().optional(),
      continue: z.string().optional(),
    })
    .optional(),
  items: z.array(z.unknown()).nullish(),
});

/** One line of a watch stream; `object` is validated by the consumer according to `type`. */
export const WatchEventSchema = z.object({
  type: z.enum(['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK', 'ERROR']),
  object: z.unknown(),
});
export type WatchEvent = z.infer<typeof WatchEventSchema>;

/** `namespace/name`, or just `name` for cluster-scoped objects. */
export function objectKey(namespace: string | undefined, name: string): string {
  return namespace ? `${namespace}/${name}` : name;
}

export function keyOf(obj: { metadata: { name: string; namespace?: string | undefined } }): string {
  return objectKey(obj.metadata.namespace, obj.metadata.name);
}
