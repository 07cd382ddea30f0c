import type { z } from 'zod';

/**
 * "did you mean" for a config field nobody knows (issue #29 item 7): zod says `Unrecognized key:
 * "bindngs"`; the user needs the field they meant. Pure.
 */

type Def = { type?: string; innerType?: z.ZodType; in?: z.ZodType; shape?: Record<string, z.ZodType> };
const defOf = (s: z.ZodType): Def => (s as unknown as { _zod: { def: Def } })._zod.def;

/** The field names an object schema accepts at `path` (through optional/default/nullable/pipe). */
export function fieldsAt(schema: z.ZodType, path: readonly string[]): string[] {
  let s: z.ZodType | undefined = schema;
  const unwrap = (x: z.ZodType): z.ZodType => {
    let cur = x;
    for (let i = 0; i < 10; i++) {
      const d = defOf(cur);
      const next = d.innerType ?? (d.type === 'pipe' ? d.in : undefined);
      if (!next) break;
      cur = next;
    }
    return cur;
  };
  for (const key of [...path, '']) {
    if (!s) return [];
    const d = defOf(unwrap(s));
    if (d.type !== 'object' || !d.shape) return [];
    if (key === '') return Object.keys(d.shape);
    s = d.shape[key];
  }
  return [];
}

/** Edit distance (insert, delete, substitute, transpose adjacent). */
function distance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [
    i,
    ...Array<number>(b.length).fill(0),
  ]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  return d[a.length]![b.length]!;
}

/** The closest known field, when it is close enough to be a typo (or differs only in case). */
export function closest(unknown: string, known: readonly string[]): string | undefined {
  let best: { name: string; d: number } | undefined;
  for (const name of known) {
    const d = name.toLowerCase() === unknown.toLowerCase() ? 0 : distance(unknown, name);
    if (!best || d < best.d) best = { name, d };
  }
  return best && best.d <= Math.max(2, Math.floor(unknown.length / 3)) ? best.name : undefined;
}

/**
 * Rewrites zod's `path: Unrecognized key(s): "a", "b"` lines into one line per key naming the field
 * it probably meant, or the fields that exist there. Other lines pass unchanged.
 */
export function explainUnknownKeys(errors: readonly string[], schema: z.ZodType): string[] {
  return errors.flatMap((line) => {
    const m = /^(.*?): Unrecognized keys?: (.*)$/.exec(line);
    if (!m) return [line];
    const at = m[1] === '(root)' ? [] : m[1]!.split('.');
    const known = fieldsAt(schema, at);
    const keys = [...m[2]!.matchAll(/"([^"]*)"/g)].map((k) => k[1]!);
    return keys.map((key) => {
      const where = at.length ? `${at.join('.')}.${key}` : key;
      const guess = closest(key, known);
      const hint = guess
        ? `did you mean "${guess}"?`
        : known.length
          ? `the fields here are ${known.join(', ')}`
          : '`endpoint-binder controller --help` lists every field';
      return `${where}: unknown field; ${hint}`;
    });
  });
}
