import { z } from 'zod';
import { Timestamp, descriptionInput, listEnvelope, metadataInput } from './common.js';

export const IPPolicy = z.object({
  id: z.string(),
  uri: z.string(),
  created_at: Timestamp,
  description: z.string().optional(),
  metadata: z.string().optional(),
});
export type IPPolicy = z.infer<typeof IPPolicy>;

export const IPPolicyCreate = z.strictObject({
  description: descriptionInput.optional(),
  metadata: metadataInput.optional(),
});
export type IPPolicyCreate = z.infer<typeof IPPolicyCreate>;

export const IPPolicyUpdate = IPPolicyCreate;
export type IPPolicyUpdate = z.infer<typeof IPPolicyUpdate>;

export const IPPolicyList = listEnvelope('ip_policies', IPPolicy);
export type IPPolicyList = z.infer<typeof IPPolicyList>;
