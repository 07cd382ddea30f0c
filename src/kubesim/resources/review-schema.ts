import { z } from 'zod';
import { objectSchema } from './meta-schema.js';

/**
 * The self reviews with every field of k8s.io/api/authorization/v1 (SelfSubjectAccessReview,
 * SelfSubjectRulesReview) and k8s.io/api/authentication/v1 (SelfSubjectReview). See meta-schema.ts.
 */

const strings = () => z.array(z.string());

const fieldSelectorAttributesSchema = z.object({
  rawSelector: z.string().optional(),
  requirements: z
    .array(
      z.object({ key: z.string().optional(), operator: z.string().optional(), values: strings().optional() }),
    )
    .optional(),
});
const labelSelectorAttributesSchema = fieldSelectorAttributesSchema;

export const resourceAttributesSchema = z.object({
  namespace: z.string().optional(),
  verb: z.string().optional(),
  group: z.string().optional(),
  version: z.string().optional(),
  resource: z.string().optional(),
  subresource: z.string().optional(),
  name: z.string().optional(),
  fieldSelector: fieldSelectorAttributesSchema.optional(),
  labelSelector: labelSelectorAttributesSchema.optional(),
});

export const nonResourceAttributesSchema = z.object({
  path: z.string().optional(),
  verb: z.string().optional(),
});

const subjectAccessReviewStatusSchema = z.object({
  allowed: z.boolean().optional(),
  denied: z.boolean().optional(),
  reason: z.string().optional(),
  evaluationError: z.string().optional(),
});

export const selfSubjectAccessReviewSchema = objectSchema({
  spec: z
    .object({
      resourceAttributes: resourceAttributesSchema.optional(),
      nonResourceAttributes: nonResourceAttributesSchema.optional(),
    })
    .optional(),
  status: subjectAccessReviewStatusSchema.optional(),
});

/** SubjectAccessReview: the same attributes, for the user (and groups, extra, uid) in the spec. */
export const subjectAccessReviewSchema = objectSchema({
  spec: z
    .object({
      resourceAttributes: resourceAttributesSchema.optional(),
      nonResourceAttributes: nonResourceAttributesSchema.optional(),
      user: z.string().optional(),
      groups: strings().optional(),
      extra: z.record(z.string(), strings()).optional(),
      uid: z.string().optional(),
    })
    .optional(),
  status: subjectAccessReviewStatusSchema.optional(),
});

export const selfSubjectRulesReviewSchema = objectSchema({
  spec: z.object({ namespace: z.string().optional() }).optional(),
  status: z
    .object({
      resourceRules: z
        .array(
          z.object({
            verbs: strings().optional(),
            apiGroups: strings().optional(),
            resources: strings().optional(),
            resourceNames: strings().optional(),
          }),
        )
        .optional(),
      nonResourceRules: z
        .array(z.object({ verbs: strings().optional(), nonResourceURLs: strings().optional() }))
        .optional(),
      incomplete: z.boolean().optional(),
      evaluationError: z.string().optional(),
    })
    .optional(),
});

export const selfSubjectReviewSchema = objectSchema({
  status: z
    .object({
      userInfo: z
        .object({
          username: z.string().optional(),
          uid: z.string().optional(),
          groups: strings().optional(),
          extra: z.record(z.string(), strings()).optional(),
        })
        .optional(),
    })
    .optional(),
});
