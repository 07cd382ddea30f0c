import { z } from 'zod';
import { conditionSchema, objectSchema } from './meta-schema.js';
import { labelSelectorSchema } from './workload-schema.js';

/**
 * admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding
 * with every field of k8s.io/api/admissionregistration/v1. See meta-schema.ts.
 */

const strings = () => z.array(z.string());

export const namedRuleWithOperationsSchema = z.object({
  resourceNames: strings().optional(),
  operations: strings().optional(),
  apiGroups: strings().optional(),
  apiVersions: strings().optional(),
  resources: strings().optional(),
  scope: z.string().optional(),
});
export type NamedRuleWithOperations = z.infer<typeof namedRuleWithOperationsSchema>;

export const matchResourcesSchema = z.object({
  namespaceSelector: labelSelectorSchema.optional(),
  objectSelector: labelSelectorSchema.optional(),
  resourceRules: z.array(namedRuleWithOperationsSchema).optional(),
  excludeResourceRules: z.array(namedRuleWithOperationsSchema).optional(),
  matchPolicy: z.string().optional(),
});
export type MatchResources = z.infer<typeof matchResourcesSchema>;

export const validationSchema = z.object({
  expression: z.string().optional(),
  message: z.string().optional(),
  reason: z.string().optional(),
  messageExpression: z.string().optional(),
});

export const policySpecSchema = z.object({
  paramKind: z.object({ apiVersion: z.string().optional(), kind: z.string().optional() }).optional(),
  matchConstraints: matchResourcesSchema.optional(),
  validations: z.array(validationSchema).optional(),
  failurePolicy: z.string().optional(),
  auditAnnotations: z
    .array(z.object({ key: z.string().optional(), valueExpression: z.string().optional() }))
    .optional(),
  matchConditions: z
    .array(z.object({ name: z.string().optional(), expression: z.string().optional() }))
    .optional(),
  variables: z.array(z.object({ name: z.string().optional(), expression: z.string().optional() })).optional(),
});
export type PolicySpec = z.infer<typeof policySpecSchema>;

export const policyObjectSchema = objectSchema({
  spec: policySpecSchema.optional(),
  status: z
    .object({
      observedGeneration: z.number().int().optional(),
      typeChecking: z
        .object({
          expressionWarnings: z
            .array(z.object({ fieldRef: z.string().optional(), warning: z.string().optional() }))
            .optional(),
        })
        .optional(),
      conditions: z.array(conditionSchema).optional(),
    })
    .optional(),
});

export const bindingSpecSchema = z.object({
  policyName: z.string().optional(),
  paramRef: z
    .object({
      name: z.string().optional(),
      namespace: z.string().optional(),
      selector: labelSelectorSchema.optional(),
      parameterNotFoundAction: z.string().optional(),
    })
    .optional(),
  matchResources: matchResourcesSchema.optional(),
  validationActions: strings().optional(),
});
export type BindingSpec = z.infer<typeof bindingSpecSchema>;

export const bindingObjectSchema = objectSchema({ spec: bindingSpecSchema.optional() });
