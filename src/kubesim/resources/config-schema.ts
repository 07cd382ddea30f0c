import { z } from 'zod';
import { objectReferenceSchema, objectSchema } from './meta-schema.js';

/** core/v1 ServiceAccount, Secret and ConfigMap with every field of k8s.io/api/core/v1. See meta-schema.ts. */

const stringMap = () => z.record(z.string(), z.string());

export const serviceAccountObjectSchema = objectSchema({
  secrets: z.array(objectReferenceSchema).optional(),
  imagePullSecrets: z.array(z.object({ name: z.string().optional() })).optional(),
  automountServiceAccountToken: z.boolean().optional(),
});

export const secretObjectSchema = objectSchema({
  immutable: z.boolean().optional(),
  /** Values are base64 on the wire ([]byte in Go). */
  data: stringMap().optional(),
  /** Write-only: folded into data by the server, never stored or returned. */
  stringData: stringMap().optional(),
  type: z.string().optional(),
});

export const configMapObjectSchema = objectSchema({
  immutable: z.boolean().optional(),
  data: stringMap().optional(),
  binaryData: stringMap().optional(),
});
