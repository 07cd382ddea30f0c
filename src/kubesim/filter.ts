import { META_FIELD_LABELS, type ResourceDef } from './resources/registry.js';
import { parseFieldSelector, parseLabelSelector, type ObjectFilter } from './selectors.js';
import { errors } from './status.js';
import type { KubeObject } from './types.js';

/**
 * Compiles `labelSelector`/`fieldSelector` query values for one resource. Field labels are
 * checked the way the apiserver's field label conversion does it (a 400 with the conversion's own
 * words, before any object is looked at).
 */

function unsupported(def: ResourceDef, label: string): string {
  // runtime.DefaultMetaV1FieldSelectorConversion words it differently from the per-kind functions.
  return def.fieldLabels
    ? `field label not supported: ${label}`
    : `"${label}" is not a known field selector: only "metadata.name", "metadata.namespace"`;
}

export function buildFilter(def: ResourceDef, labelSelector = '', fieldSelector = ''): ObjectFilter {
  const labels = parseLabelSelector(labelSelector);
  if (typeof labels === 'string') throw errors.badRequest(labels);
  const fields = parseFieldSelector(fieldSelector);
  if (typeof fields === 'string') throw errors.badRequest(fields);
  const known = def.fieldLabels ?? META_FIELD_LABELS;
  for (const f of fields)
    if (!Object.hasOwn(known, f.field)) throw errors.badRequest(unsupported(def, f.field));
  const fieldValue = (obj: KubeObject, f: string): string | undefined => known[f]?.(obj);
  return { labels, fields, fieldValue, empty: labels.length === 0 && fields.length === 0 };
}

/**
 * The object name a list or watch names through `fieldSelector=metadata.name=<n>` (as the
 * RequestInfoFactory takes it for authorization: exact match, valid path segment), or undefined.
 */
export function nameFromFieldSelector(fieldSelector: string | undefined): string | undefined {
  if (!fieldSelector) return undefined;
  const fields = parseFieldSelector(fieldSelector);
  if (typeof fields === 'string') return undefined;
  const exact = fields.find((f) => f.field === 'metadata.name' && f.op !== '!=');
  const name = exact?.value;
  if (!name || name === '.' || name === '..' || /[/%]/.test(name)) return undefined;
  return name;
}
