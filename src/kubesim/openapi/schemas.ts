import { z } from 'zod';
import { isRecord } from '../types.js';
import { models } from './models.js';

/**
 * Renders the zod models as OpenAPI schema objects, once per dialect: OpenAPI 3.0
 * (`#/components/schemas/…`, references wrapped in allOf so a description can sit beside them,
 * as the real v3 documents do) and Swagger 2.0 (`#/definitions/…`, plain $ref).
 */

export type Dialect = 'v2' | 'v3';
export type SchemaObject = Record<string, unknown>;

export const refPrefix = (d: Dialect) => (d === 'v3' ? '#/components/schemas/' : '#/definitions/');

function tidy(node: unknown, dialect: Dialect): unknown {
  if (Array.isArray(node)) return node.map((n) => tidy(n, dialect));
  if (!isRecord(node)) return node;
  const out: SchemaObject = {};
  for (const [k, v] of Object.entries(node)) {
    if (k === '$id') continue;
    // zod states the safe-integer bounds of JS numbers; the format says it all for Go's ints.
    if ((k === 'minimum' || k === 'maximum') && node.type === 'integer') continue;
    if (k === 'gvk') out['x-kubernetes-group-version-kind'] = v;
    else out[k] = tidy(v, dialect);
  }
  const allOf = out.allOf;
  if (dialect === 'v2' && Array.isArray(allOf) && allOf.length === 1 && isRecord(allOf[0]) && allOf[0].$ref) {
    delete out.allOf;
    out.$ref = allOf[0].$ref;
  }
  return out;
}

const cache = new Map<Dialect, Record<string, SchemaObject>>();

/** Every model, by OpenAPI name. */
export function allSchemas(dialect: Dialect): Record<string, SchemaObject> {
  let schemas = cache.get(dialect);
  if (!schemas) {
    const generated = z.toJSONSchema(models, {
      target: 'openapi-3.0',
      io: 'input',
      uri: (id) => `${refPrefix(dialect)}${id}`,
    });
    schemas = tidy(generated.schemas, dialect) as Record<string, SchemaObject>;
    cache.set(dialect, schemas);
  }
  return schemas;
}

/** The named schemas and everything they reference, transitively. */
export function closure(dialect: Dialect, roots: string[]): Record<string, SchemaObject> {
  const all = allSchemas(dialect);
  const prefix = refPrefix(dialect);
  const out: Record<string, SchemaObject> = {};
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) {
      node.forEach(visit);
      return;
    }
    if (!isRecord(node)) return;
    const ref = node.$ref;
    if (typeof ref === 'string' && ref.startsWith(prefix)) add(ref.slice(prefix.length));
    Object.values(node).forEach(visit);
  };
  const add = (name: string): void => {
    const schema = all[name];
    if (!schema || out[name]) return;
    out[name] = schema;
    visit(schema);
  };
  roots.forEach(add);
  return Object.fromEntries(
    Object.keys(out)
      .sort()
      .map((k) => [k, out[k]!]),
  );
}

/** The OpenAPI name of a registered model. */
export function modelName(schema: z.ZodType): string {
  const id = models.get(schema)?.id;
  if (!id) throw new Error('not a registered OpenAPI model');
  return id;
}
