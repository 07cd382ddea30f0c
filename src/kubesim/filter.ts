import type { ResourceDef } from './resources/registry.js';
import { parseFieldSelector, parseLabelSelector, type ObjectFilter } from './selectors.js';
import { errors } from './status.js';
import type { KubeObject } from './types.js';

/**
 * Compiles `labelSelector`/`fieldSelector` query values for one resource. Unknown field labels
 * are rejected the way the apiserver's field label conversion does it.
 */
export function buildFilter(def: ResourceDef, labelSelector = '', fieldSelector = ''): ObjectFilter {
  const labels = parseLabelSelector(labelSelector);
  if (typeof labels === 'string') throw errors.badRequest(labels);
  const fields = parseFieldSelector(fieldSelector);
  if (typeof fields === 'string') throw errors.badRequest(fields);
  const extra = def.selectableFields ?? {};
  for (const f of fields) {
    if (f.field !== 'metadata.name' && f.field !== 'metadata.namespace' && !(f.field in extra)) {
      throw errors.badRequest(
        `Unable to find "${def.group}/${def.version}, Resource=${def.plural}" that match label selector "${labelSelector}", ` +
          `field selector "${fieldSelector}": field label not supported: ${f.field}`,
      );
    }
  }
  const fieldValue = (obj: KubeObject, f: string): string | undefined => {
    if (f === 'metadata.name') return obj.metadata.name;
    if (f === 'metadata.namespace') return obj.metadata.namespace ?? '';
    return extra[f]?.(obj);
  };
  return { labels, fields, fieldValue, empty: labels.length === 0 && fields.length === 0 };
}
