/**
 * Pure checks on request bodies, run around JSON.parse so that no later step (zod, handlers,
 * JSON.stringify of stored objects) ever meets a value it cannot handle.
 */

/** Deepest `[`/`{` nesting a request body may have; the deepest schema needs about six. */
export const MAX_BODY_NESTING = 32;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN = new Set([0x5b, 0x7b]);
const CLOSE = new Set([0x5d, 0x7d]);

/**
 * The maximum bracket nesting of JSON text, stopping once past `limit`. JSON quoting is
 * unambiguous (a string starts and ends with an unescaped `"`), so this byte scan sees exactly
 * the nesting JSON.parse would build; it runs before parsing, in linear time.
 */
export function jsonNesting(bytes: Uint8Array, limit = MAX_BODY_NESTING): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    if (inString) {
      if (b === BACKSLASH) i++;
      else if (b === QUOTE) inString = false;
    } else if (b === QUOTE) {
      inString = true;
    } else if (OPEN.has(b)) {
      depth++;
      if (depth > max) {
        max = depth;
        if (max > limit) return max;
      }
    } else if (CLOSE.has(b)) {
      depth--;
    }
  }
  return max;
}

/** A UTF-16 surrogate without its partner: what a `\ud800` escape in JSON text produces. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

export type BodyProblem = { kind: 'lone-surrogate'; field: string } | { kind: 'proto-key'; field: string };

function keyField(field: string, key: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? `${field}.${key}` : `${field}[${JSON.stringify(key)}]`;
}

/**
 * The first string or key that cannot be stored faithfully: a lone surrogate (not Unicode text)
 * or a `__proto__` key, which JSON.parse keeps as an own property but any object copy (zod's
 * record parsing among them) turns into a prototype assignment and silently drops.
 */
export function findBodyProblem(value: unknown, field = 'body'): BodyProblem | undefined {
  if (typeof value === 'string') {
    return LONE_SURROGATE.test(value) ? { kind: 'lone-surrogate', field } : undefined;
  }
  if (value === null || typeof value !== 'object') return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const p = findBodyProblem(value[i], `${field}[${i}]`);
      if (p) return p;
    }
    return undefined;
  }
  for (const key of Object.keys(value)) {
    if (key === '__proto__') return { kind: 'proto-key', field: `${field}["__proto__"]` };
    const at = keyField(field, key);
    if (LONE_SURROGATE.test(key)) return { kind: 'lone-surrogate', field: at };
    const p = findBodyProblem((value as Record<string, unknown>)[key], at);
    if (p) return p;
  }
  return undefined;
}

/** The charset parameter of a Content-Type value, lower-cased and unquoted; undefined without one. */
export function contentTypeCharset(contentType: string): string | undefined {
  for (const param of contentType.split(';').slice(1)) {
    const eq = param.indexOf('=');
    if (eq === -1) continue;
    if (param.slice(0, eq).trim().toLowerCase() !== 'charset') continue;
    return param
      .slice(eq + 1)
      .trim()
      .replace(/^"(.*)"$/, '$1')
      .toLowerCase();
  }
  return undefined;
}
