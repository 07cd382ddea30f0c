import type { z } from 'zod';
import { isDNS1123Subdomain } from '../validation/names.js';
import { decodeWith } from './decode.js';
import { apiVersionOf, type ResourceDef } from './registry.js';

/**
 * A ResourceDef for a kind that is stored and served faithfully but has no controller behind it
 * in kubesim: the usual verbs, the genericregistry defaults (PUT never creates, updates need no
 * resourceVersion, delete answers with a Status), a DNS-1123 subdomain name, the structural
 * decode from the kind's schema. `over` sets what differs (strategies, hooks, merge keys).
 */
export function basicResource(
  names: Pick<ResourceDef, 'group' | 'version' | 'kind' | 'plural' | 'namespaced'> & {
    shortNames?: string[];
  },
  schema: z.ZodType,
  over: Partial<ResourceDef> = {},
): ResourceDef {
  return {
    ...names,
    listKind: `${names.kind}List`,
    singular: names.kind.toLowerCase(),
    verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
    allowCreateOnUpdate: false,
    allowUnconditionalUpdate: true,
    returnDeletedObject: false,
    tracksGeneration: false,
    nameRule: isDNS1123Subdomain,
    schema,
    decode: (obj) => decodeWith(schema, obj, names.kind, apiVersionOf(names)),
    ...over,
  };
}
