import type { z } from 'zod';
import { isRecord } from '../types.js';

/**
 * Unknown-field detection as the apiserver's strict decoder (sigs.k8s.io/json) does it, driven by
 * a kind's zod schema (resources/*-schema.ts): every key that the schema does not declare is
 * reported with its full path (`spec.bogus`, `spec.ports[0].bogus`, `metadata.bogus`) and dropped
 * from the returned copy, as decoding into a Go struct drops it. Free-form values (`z.record`
 * with unknown values, `z.unknown()`, unions) are not looked into.
 */

export interface PruneResult {
  value: unknown;
  /** Paths of unknown fields, in document order. */
  unknown: string[];
}

type Schema = z.core.$ZodType;

function join(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

/** Strips wrappers that do not change the JSON shape (optional, nullable, default, refinements). */
function unwrap(schema: Schema): Schema {
  let s = schema;
  for (;;) {
    const def = s._zod.def as { type: string; innerType?: Schema; in?: Schema };
    if ((def.type === 'optional' || def.type === 'nullable' || def.type === 'default') && def.innerType) {
      s = def.innerType;
    } else if (def.type === 'pipe' && def.in) {
      s = def.in;
    } else {
      return s;
    }
  }
}

function walk(schema: Schema, value: unknown, path: string, unknown: string[]): unknown {
  const s = unwrap(schema);
  const def = s._zod.def as {
    type: string;
    shape?: Record<string, Schema>;
    catchall?: Schema;
    element?: Schema;
    valueType?: Schema;
  };
  if (def.type === 'object' && isRecord(value)) {
    const shape = def.shape ?? {};
    const open = def.catchall !== undefined && (def.catchall._zod.def as { type: string }).type !== 'never';
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      const field = shape[k];
      if (field) out[k] = walk(field, v, join(path, k), unknown);
      else if (open) out[k] = v;
      else unknown.push(join(path, k));
    }
    return out;
  }
  if (def.type === 'array' && def.element && Array.isArray(value)) {
    const element = def.element;
    return value.map((v, i) => walk(element, v, `${path}[${i}]`, unknown));
  }
  if (def.type === 'record' && def.valueType && isRecord(value)) {
    const valueType = def.valueType;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = walk(valueType, v, join(path, k), unknown);
    return out;
  }
  return value;
}

/** Finds (and drops from a copy) every field `schema` does not declare. */
export function pruneUnknownFields(schema: z.ZodType, value: unknown): PruneResult {
  const unknown: string[] = [];
  const pruned = walk(schema, value, '', unknown);
  return { value: pruned, unknown };
}
