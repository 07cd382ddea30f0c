import type { KubeObject } from '../types.js';
import { field, type FieldError } from './field.js';
import { isQualifiedName, isValidLabelValue } from './names.js';

/** ValidateObjectMeta: name (with the resource's own name rule), labels and annotation keys. */
export function validateObjectMeta(obj: KubeObject, nameRule: (name: string) => string[]): FieldError[] {
  const errs: FieldError[] = [];
  const meta = obj.metadata;
  if (!meta.name) {
    errs.push(field.required('metadata.name', 'name or generateName is required'));
  } else {
    for (const msg of nameRule(meta.name)) errs.push(field.invalid('metadata.name', meta.name, msg));
  }
  for (const [key, value] of Object.entries(meta.labels ?? {})) {
    for (const msg of isQualifiedName(key)) errs.push(field.invalid('metadata.labels', key, msg));
    for (const msg of isValidLabelValue(value)) errs.push(field.invalid('metadata.labels', value, msg));
  }
  let annotationBytes = 0;
  for (const [key, value] of Object.entries(meta.annotations ?? {})) {
    for (const msg of isQualifiedName(key.toLowerCase()))
      errs.push(field.invalid('metadata.annotations', key, msg));
    annotationBytes += Buffer.byteLength(key) + Buffer.byteLength(value);
  }
  if (annotationBytes > 256 * 1024) {
    errs.push({
      type: 'FieldValueTooLong',
      field: 'metadata.annotations',
      detail: 'must have at most 262144 bytes',
    });
  }
  return errs;
}

/** Label maps that are not metadata (e.g. a Service selector) follow the same key/value rules. */
export function validateLabelMap(map: Record<string, string> | undefined, path: string): FieldError[] {
  const errs: FieldError[] = [];
  for (const [key, value] of Object.entries(map ?? {})) {
    for (const msg of isQualifiedName(key)) errs.push(field.invalid(path, key, msg));
    for (const msg of isValidLabelValue(value)) errs.push(field.invalid(path, value, msg));
  }
  return errs;
}
