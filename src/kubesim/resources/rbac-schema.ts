import { z } from 'zod';
import { objectSchema } from './meta-schema.js';
import { labelSelectorSchema } from './workload-schema.js';

/** rbac.authorization.k8s.io/v1 with every field of k8s.io/api/rbac/v1. See meta-schema.ts. */

const strings = () => z.array(z.string());

export const policyRuleSchema = z.object({
  verbs: strings(),
  apiGroups: strings().optional(),
  resources: strings().optional(),
  resourceNames: strings().optional(),
  nonResourceURLs: strings().optional(),
});
export type RbacPolicyRule = z.infer<typeof policyRuleSchema>;

export const subjectSchema = z.object({
  kind: z.string(),
  apiGroup: z.string().optional(),
  name: z.string(),
  namespace: z.string().optional(),
});
export type RbacSubject = z.infer<typeof subjectSchema>;

export const roleRefSchema = z.object({ apiGroup: z.string(), kind: z.string(), name: z.string() });

export const roleObjectSchema = objectSchema({ rules: z.array(policyRuleSchema).optional() });

export const clusterRoleObjectSchema = objectSchema({
  rules: z.array(policyRuleSchema).optional(),
  aggregationRule: z.object({ clusterRoleSelectors: z.array(labelSelectorSchema).optional() }).optional(),
});

export const roleBindingObjectSchema = objectSchema({
  subjects: z.array(subjectSchema).optional(),
  roleRef: roleRefSchema.optional(),
});
