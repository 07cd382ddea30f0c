import { z } from 'zod';
import type { KubeObject } from '../types.js';

/**
 * What every printer is made of: column definitions as metav1.TableColumnDefinition, the shared
 * Name and Age columns with the real descriptions, and lenient views of stored objects.
 */

export interface ColumnDefinition {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
}

export type Cell = string | number;

export interface Printer {
  columns: ColumnDefinition[];
  cells(obj: KubeObject, now: number): Cell[];
}

export function col(
  name: string,
  description: string,
  extra: Partial<ColumnDefinition> = {},
): ColumnDefinition {
  return { name, type: 'string', format: '', description, priority: 0, ...extra };
}

export const NAME_DOC =
  'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated.';
export const AGE_DOC =
  'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.';
export const nameCol = (extra: Partial<ColumnDefinition> = {}) =>
  col('Name', NAME_DOC, { format: 'name', ...extra });
export const ageCol = () => col('Age', AGE_DOC);

/** labels.FormatLabels: sorted `k=v` pairs, `<none>` when empty. */
export function formatLabels(map: Record<string, string> | undefined): string {
  const keys = Object.keys(map ?? {}).sort();
  if (keys.length === 0) return '<none>';
  return keys.map((k) => `${k}=${map?.[k] ?? ''}`).join(',');
}

// Lenient views: stored objects already passed their resource's decode; a field of an
// unexpected shape prints as unset rather than failing the whole table.
export const view = <T extends z.ZodType>(schema: T, obj: unknown): z.infer<T> | undefined => {
  const parsed = schema.safeParse(obj);
  return parsed.success ? parsed.data : undefined;
};
export const optStr = z.string().optional().catch(undefined);
export const optNum = z.number().optional().catch(undefined);

const selectorView = z.looseObject({
  matchLabels: z.record(z.string(), z.string()).optional().catch(undefined),
  matchExpressions: z
    .array(z.looseObject({ key: z.string(), operator: z.string(), values: z.array(z.string()).optional() }))
    .optional()
    .catch(undefined),
});

/**
 * labels.Selector.String() of a metav1.LabelSelector (requirements sorted by key, `k=v`,
 * `k in (a,b)`, `k notin (a,b)`, `k`, `!k`); `empty` when it selects everything, as
 * printDeployment (``) and metav1.FormatLabelSelector (`<none>`) differ there.
 */
export function formatLabelSelector(selector: unknown, empty: string): string {
  const s = view(selectorView, selector);
  const reqs: { key: string; text: string }[] = [];
  for (const [k, v] of Object.entries(s?.matchLabels ?? {})) reqs.push({ key: k, text: `${k}=${v}` });
  for (const e of s?.matchExpressions ?? []) {
    const values = [...(e.values ?? [])].sort().join(',');
    const text =
      e.operator === 'In'
        ? `${e.key} in (${values})`
        : e.operator === 'NotIn'
          ? `${e.key} notin (${values})`
          : e.operator === 'Exists'
            ? e.key
            : `!${e.key}`;
    reqs.push({ key: e.key, text });
  }
  if (reqs.length === 0) return empty;
  return reqs
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    .map((r) => r.text)
    .join(',');
}
