import type { Identity } from './auth.js';
import type { Authorizer } from './authorizer.js';
import type { Reply } from './handlers.js';
import { apiVersionOf, type ResourceDef } from './resources/registry.js';
import { nonResourceAttributesSchema, resourceAttributesSchema } from './resources/review-schema.js';
import { errors } from './status.js';
import { isRecord, stripNulls } from './types.js';
import { field, invalidError, type FieldError } from './validation/field.js';
import { z } from 'zod';

/**
 * The answers to the self reviews (pkg/registry/authorization/selfsubject*review,
 * pkg/registry/authentication/selfsubjectreview): what the requesting identity (after
 * impersonation) may do, or who it is. Nothing is stored; a create answers 201 with the review
 * and its status.
 */

const accessSpecSchema = z.object({
  resourceAttributes: resourceAttributesSchema.optional(),
  nonResourceAttributes: nonResourceAttributesSchema.optional(),
});

/** SubjectAccessReview's spec: the attributes and the identity to answer for. */
const subjectSpecSchema = accessSpecSchema.extend({
  user: z.string().optional(),
  groups: z.array(z.string()).optional(),
  extra: z.record(z.string(), z.array(z.string())).optional(),
  uid: z.string().optional(),
});

const typeMetaSchema = z.object({ apiVersion: z.string().optional(), kind: z.string().optional() });

function cannotHandle(def: ResourceDef, why: string) {
  return errors.badRequest(
    `${def.kind} in version "${def.version}" cannot be handled as a ${def.kind}: ${why}`,
  );
}

function decoded(def: ResourceDef, raw: unknown): Record<string, unknown> {
  const body = stripNulls(raw);
  if (!isRecord(body)) throw cannotHandle(def, 'json: cannot unmarshal non-object into Go value');
  const bad = def.decode?.({
    apiVersion: '',
    kind: '',
    ...body,
    metadata: { name: '', ...(isRecord(body['metadata']) ? body['metadata'] : {}) },
  });
  if (bad) throw errors.badRequest(bad);
  // The decode above checked their types.
  const { apiVersion, kind } = typeMetaSchema.parse(body);
  if (apiVersion !== undefined && apiVersion !== apiVersionOf(def))
    throw errors.badRequest(
      `the API version in the data (${apiVersion}) does not match the expected API version (${apiVersionOf(def)})`,
    );
  if (kind !== undefined && kind !== def.kind)
    throw cannotHandle(def, `the kind in the data (${kind}) does not match the expected kind (${def.kind})`);
  return body;
}

/** The metadata of a review must be empty (managedFields aside), as ValidateSelfSubjectAccessReview says. */
function metadataErrors(body: Record<string, unknown>): FieldError[] {
  const meta = isRecord(body['metadata']) ? { ...body['metadata'] } : {};
  delete meta['managedFields'];
  return Object.keys(meta).length ? [field.invalid('metadata', meta, 'must be empty')] : [];
}

/** What the answer echoes: the review's own kind and an empty ObjectMeta, as Go serialises it. */
function envelope(def: ResourceDef) {
  return { kind: def.kind, apiVersion: apiVersionOf(def), metadata: { creationTimestamp: null } };
}

export class Reviews {
  constructor(private readonly authorizer: Authorizer) {}

  answer(def: ResourceDef, body: unknown, who: Identity): Reply {
    const obj = decoded(def, body);
    switch (def.kind) {
      case 'SelfSubjectAccessReview':
        return this.access(def, obj, who);
      case 'SubjectAccessReview':
        return this.subjectAccess(def, obj);
      case 'SelfSubjectRulesReview':
        return this.rules(def, obj, who);
      default:
        return this.self(def, who);
    }
  }

  /**
   * SubjectAccessReview: the same question for the identity in the spec, exactly as given (no
   * group is added), from the stored RBAC objects and the bootstrap policy.
   */
  private subjectAccess(def: ResourceDef, obj: Record<string, unknown>): Reply {
    const spec = subjectSpecSchema.parse(obj['spec'] ?? {});
    const extraErrs =
      !spec.user && !spec.groups?.length
        ? [field.invalid('spec.user', spec.user ?? '', 'at least one of user or group must be specified')]
        : [];
    const who: Identity = {
      user: spec.user ?? '',
      groups: spec.groups ?? [],
      ...(spec.uid ? { uid: spec.uid } : {}),
      ...(spec.extra ? { extra: spec.extra } : {}),
      source: { kind: 'rbac' },
    };
    return this.access(def, obj, who, extraErrs);
  }

  private access(
    def: ResourceDef,
    obj: Record<string, unknown>,
    who: Identity,
    extraErrs: FieldError[] = [],
  ): Reply {
    const spec = (def.kind === 'SubjectAccessReview' ? subjectSpecSchema : accessSpecSchema).parse(
      obj['spec'] ?? {},
    );
    const errs: FieldError[] = [];
    if (spec.resourceAttributes && spec.nonResourceAttributes)
      errs.push(
        field.invalidRaw(
          'spec.nonResourceAttributes',
          // The internal struct, printed by encoding/json with its Go field names.
          JSON.stringify({
            Path: spec.nonResourceAttributes.path ?? '',
            Verb: spec.nonResourceAttributes.verb ?? '',
          }),
          'cannot be specified in combination with resourceAttributes',
        ),
      );
    if (!spec.resourceAttributes && !spec.nonResourceAttributes)
      errs.push(
        field.invalidRaw(
          'spec.resourceAttributes',
          'null',
          'exactly one of nonResourceAttributes or resourceAttributes must be specified',
        ),
      );
    errs.push(...extraErrs, ...metadataErrors(obj));
    // Sic: the real server names no kind in this error (`.authorization.k8s.io "" is invalid`).
    if (errs.length) throw invalidError(def.group, '', '', errs);
    const ra = spec.resourceAttributes;
    const nra = spec.nonResourceAttributes;
    const decision = ra
      ? this.authorizer.decide(who, {
          resource: {
            verb: ra.verb ?? '',
            group: ra.group ?? '',
            resource: ra.resource ?? '',
            ...(ra.subresource ? { subresource: ra.subresource } : {}),
            namespace: ra.namespace || undefined,
            name: ra.name || undefined,
          },
        })
      : this.authorizer.decide(who, { nonResource: { verb: nra?.verb ?? '', path: nra?.path ?? '' } });
    return {
      status: 201,
      body: {
        ...envelope(def),
        spec,
        status: { allowed: decision.allowed, ...(decision.reason ? { reason: decision.reason } : {}) },
      },
    };
  }

  private rules(def: ResourceDef, obj: Record<string, unknown>, who: Identity): Reply {
    const spec = z.object({ namespace: z.string().optional() }).parse(obj['spec'] ?? {});
    if (!spec.namespace) throw errors.badRequest('no namespace on request');
    const review = this.authorizer.rulesReview(who, spec.namespace);
    return {
      status: 201,
      body: {
        ...envelope(def),
        spec,
        status: {
          resourceRules: review.resourceRules,
          nonResourceRules: review.nonResourceRules,
          incomplete: false,
        },
      },
    };
  }

  private self(def: ResourceDef, who: Identity): Reply {
    return {
      status: 201,
      body: {
        ...envelope(def),
        status: {
          userInfo: {
            username: who.user,
            ...(who.uid ? { uid: who.uid } : {}),
            groups: who.groups,
            ...(who.extra && Object.keys(who.extra).length ? { extra: who.extra } : {}),
          },
        },
      },
    };
  }
}
