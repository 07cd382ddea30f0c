import { z } from 'zod';
import { microTimeParseError } from './micro-time.js';

/**
 * The shared building blocks of the per-kind object schemas (`*-schema.ts`): every field a real
 * object can carry, with its JSON type. These schemas are the single source of "known fields":
 * unknown-field detection (fieldValidation) walks them, the structural decode (400 on a wrong
 * JSON type) runs them, and the OpenAPI documents are generated from them. `z.object` means the
 * field list is closed; a free-form value (managedFields' fieldsV1) is `z.record(…, z.unknown())`.
 * Fields are listed in the Go struct order of k8s.io/api, which is also the serialisation order.
 */

const int = () => z.number().int();
const stringMap = () => z.record(z.string(), z.string());
/** metav1.Time: RFC 3339, second precision. */
export const timeSchema = z.string();
/** metav1.MicroTime: RFC 3339 with exactly six fractional digits (Go's RFC3339Micro layout). */
export const microTimeSchema = z.string().superRefine((s, ctx) => {
  const error = microTimeParseError(s);
  if (error) ctx.addIssue({ code: 'custom', message: error });
});

export const ownerReferenceSchema = z.object({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  name: z.string().optional(),
  uid: z.string().optional(),
  controller: z.boolean().optional(),
  blockOwnerDeletion: z.boolean().optional(),
});

export const managedFieldsEntrySchema = z.object({
  manager: z.string().optional(),
  operation: z.string().optional(),
  apiVersion: z.string().optional(),
  time: timeSchema.optional(),
  fieldsType: z.string().optional(),
  fieldsV1: z.record(z.string(), z.unknown()).optional(),
  subresource: z.string().optional(),
});

export const objectMetaSchema = z.object({
  name: z.string().optional(),
  generateName: z.string().optional(),
  namespace: z.string().optional(),
  selfLink: z.string().optional(),
  uid: z.string().optional(),
  resourceVersion: z.string().optional(),
  generation: int().optional(),
  creationTimestamp: timeSchema.optional(),
  deletionTimestamp: timeSchema.optional(),
  deletionGracePeriodSeconds: int().optional(),
  labels: stringMap().optional(),
  annotations: stringMap().optional(),
  ownerReferences: z.array(ownerReferenceSchema).optional(),
  finalizers: z.array(z.string()).optional(),
  managedFields: z.array(managedFieldsEntrySchema).optional(),
});

/** core/v1 ObjectReference (Event.involvedObject, events.k8s.io Event.regarding, ...). */
export const objectReferenceSchema = z.object({
  kind: z.string().optional(),
  namespace: z.string().optional(),
  name: z.string().optional(),
  uid: z.string().optional(),
  apiVersion: z.string().optional(),
  resourceVersion: z.string().optional(),
  fieldPath: z.string().optional(),
});

/** metav1.Condition. */
export const conditionSchema = z.object({
  type: z.string().optional(),
  status: z.string().optional(),
  observedGeneration: int().optional(),
  lastTransitionTime: timeSchema.optional(),
  reason: z.string().optional(),
  message: z.string().optional(),
});

/** The envelope every top-level object has; a kind adds spec/status or its own fields. */
export function objectSchema<T extends z.ZodRawShape>(fields: T) {
  return z.object({
    apiVersion: z.string().optional(),
    kind: z.string().optional(),
    metadata: objectMetaSchema.optional(),
    ...fields,
  });
}
