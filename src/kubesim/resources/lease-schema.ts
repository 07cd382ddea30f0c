import { z } from 'zod';
import { microTimeSchema, objectSchema } from './meta-schema.js';

/** coordination.k8s.io/v1 Lease with every field of k8s.io/api/coordination/v1. See meta-schema.ts. */

export const leaseSpecFullSchema = z.object({
  holderIdentity: z.string().optional(),
  leaseDurationSeconds: z.number().int().optional(),
  acquireTime: microTimeSchema.optional(),
  renewTime: microTimeSchema.optional(),
  leaseTransitions: z.number().int().optional(),
  strategy: z.string().optional(),
  preferredHolder: z.string().optional(),
});

export const leaseObjectSchema = objectSchema({ spec: leaseSpecFullSchema.optional() });
