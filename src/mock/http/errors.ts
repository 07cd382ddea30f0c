import type { z } from 'zod';
import { errorCatalogue, type ErrorCode } from '../../api/error-codes/index.js';

/** A failure a handler answers with: a catalogue code, a message naming the field and rule, extra details. */
export class MockError extends Error {
  override name = 'MockError';
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: Record<string, string> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.status = errorCatalogue[code].status;
  }
}

function fieldPath(prefix: string, path: readonly PropertyKey[]): string {
  const parts = path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('');
  return (prefix + parts).replace(/^\./, '') || prefix;
}

function isKnownCode(code: unknown): code is ErrorCode {
  return typeof code === 'string' && code in errorCatalogue;
}

/**
 * Turns the first zod issue into the API's error: unknown fields, missing fields and rule
 * violations each get their own code, and the message always names the field.
 */
function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let v: unknown = input;
  for (const key of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<PropertyKey, unknown>)[key];
  }
  return v;
}

export function fromZodError(error: z.ZodError, input: unknown, where = 'body'): MockError {
  const issue = error.issues[0];
  if (!issue) return new MockError('ERR_121', `${where}: invalid value`);
  const field = fieldPath(where, issue.path);
  if (issue.code === 'unrecognized_keys') {
    const keys = issue.keys.map((k) => `"${k}"`).join(', ');
    return new MockError('ERR_120', `${field}: unknown field ${keys}`, {
      field: `${field}.${issue.keys[0] ?? ''}`,
    });
  }
  if (issue.code === 'invalid_type' && valueAt(input, issue.path) === undefined) {
    return new MockError('ERR_122', `${field} is required`, { field });
  }
  const params = (issue as { params?: { code?: unknown } }).params;
  const code = isKnownCode(params?.code) ? params.code : 'ERR_121';
  return new MockError(code, `${field}: ${issue.message}`, { field });
}

/** Parses with zod, throwing the API's validation error on failure. */
export function parseOrThrow<S extends z.ZodType>(schema: S, value: unknown, where = 'body'): z.infer<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw fromZodError(result.error, value, where);
  return result.data;
}
