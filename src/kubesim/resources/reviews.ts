import type { z } from 'zod';
import { decodeWith } from './decode.js';
import { apiVersionOf, type ResourceDef } from './registry.js';
import {
  selfSubjectAccessReviewSchema,
  selfSubjectReviewSchema,
  selfSubjectRulesReviewSchema,
  subjectAccessReviewSchema,
} from './review-schema.js';

/**
 * authorization.k8s.io/v1 SubjectAccessReview, SelfSubjectAccessReview and SelfSubjectRulesReview,
 * authentication.k8s.io/v1 SelfSubjectReview: cluster-scoped, create only, never stored.
 */

function reviewDef(group: string, kind: string, plural: string, schema: z.ZodType): ResourceDef {
  const names = { group, version: 'v1', kind };
  return {
    ...names,
    listKind: `${kind}List`,
    plural,
    singular: kind.toLowerCase(),
    namespaced: false,
    verbs: ['create'],
    allowCreateOnUpdate: false,
    allowUnconditionalUpdate: false,
    returnDeletedObject: false,
    tracksGeneration: false,
    schema,
    nameRule: () => [],
    decode: (obj) => decodeWith(schema, obj, kind, apiVersionOf(names)),
    review: true,
  };
}

export function reviewResources(): ResourceDef[] {
  return [
    reviewDef(
      'authorization.k8s.io',
      'SubjectAccessReview',
      'subjectaccessreviews',
      subjectAccessReviewSchema,
    ),
    reviewDef(
      'authorization.k8s.io',
      'SelfSubjectAccessReview',
      'selfsubjectaccessreviews',
      selfSubjectAccessReviewSchema,
    ),
    reviewDef(
      'authorization.k8s.io',
      'SelfSubjectRulesReview',
      'selfsubjectrulesreviews',
      selfSubjectRulesReviewSchema,
    ),
    reviewDef('authentication.k8s.io', 'SelfSubjectReview', 'selfsubjectreviews', selfSubjectReviewSchema),
  ];
}
