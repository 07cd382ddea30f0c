import { z } from 'zod';
import { objectSchema, timeSchema } from './meta-schema.js';

/** core/v1 Namespace with every field of k8s.io/api/core/v1. See meta-schema.ts. */

export const namespaceObjectSchema = objectSchema({
  spec: z.object({ finalizers: z.array(z.string()).optional() }).optional(),
  status: z
    .object({
      phase: z.string().optional(),
      conditions: z
        .array(
          z.object({
            type: z.string().optional(),
            status: z.string().optional(),
            lastTransitionTime: timeSchema.optional(),
            reason: z.string().optional(),
            message: z.string().optional(),
          }),
        )
        .optional(),
    })
    .optional(),
});
