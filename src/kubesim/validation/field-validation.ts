import { errors, type ApiError } from '../status.js';
import { isRecord } from '../types.js';
import { field, invalidError } from './field.js';

/**
 * The fieldValidation query parameter of create, update and patch (server-side field
 * validation, GA since 1.27): what to do about unknown and duplicate fields in a request body.
 * `Strict` fails the request, `Warn` (the default) stores the object without them and answers
 * with one `Warning` header per field, `Ignore` drops them silently.
 */

export type FieldValidation = 'Ignore' | 'Warn' | 'Strict';
const DIRECTIVES: FieldValidation[] = ['Ignore', 'Strict', 'Warn'];

/** The directive of a request; an unsupported value is the 422 ValidateCreate/Update/PatchOptions gives. */
export function fieldValidationOf(
  raw: string | undefined,
  optionsKind: 'CreateOptions' | 'UpdateOptions' | 'PatchOptions',
): FieldValidation {
  if (raw === undefined || raw === '') return 'Warn';
  const found = DIRECTIVES.find((d) => d === raw);
  if (found) return found;
  throw invalidError('meta.k8s.io', optionsKind, '', [
    // The real list names the empty string too (it means Warn).
    field.notSupported('fieldValidation', raw, ['', ...DIRECTIVES]),
  ]);
}

/** Where the body came from decides how a Strict failure is reported. */
export type StrictSource =
  | { kind: 'body'; resourceKind: string; version: string }
  /** `value` is what the real server prints as the patch's Invalid value. */
  | { kind: 'patch'; value: string };

export interface FieldCheck {
  directive: FieldValidation;
  /** Duplicate keys found in the raw body (JSON bodies only). */
  duplicates: string[];
  source: StrictSource;
  /** Warn mode appends the warning texts here. */
  warnings: string[];
}

/** The strict decoding messages, in the decoder's wording. */
export function strictMessages(unknown: string[], duplicates: string[]): string[] {
  return [...duplicates.map((d) => `duplicate field "${d}"`), ...unknown.map((u) => `unknown field "${u}"`)];
}

/**
 * A Strict failure as the real handlers report it: a create or update body fails decoding (400
 * `... cannot be handled as a Service: strict decoding error: ...`); a patch result is a 422 on
 * the field `patch` (patch.go's applyPatchToObject / jsonPatcher).
 */
export function strictError(source: StrictSource, messages: string[]): ApiError {
  const text = `strict decoding error: ${messages.join(', ')}`;
  if (source.kind === 'body') {
    return errors.badRequest(
      `${source.resourceKind} in version "${source.version}" cannot be handled as a ${source.resourceKind}: ${text}`,
    );
  }
  return invalidError('', '', '', [field.invalid('patch', source.value, text)]);
}

/** Go's %+v of a decoded JSON value (`map[spec:map[bogus:1]]`), as strategic-merge errors print the patch. */
export function goFormat(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(goFormat).join(' ')}]`;
  if (isRecord(value)) {
    const keys = Object.keys(value).sort();
    return `map[${keys.map((k) => `${k}:${goFormat(value[k])}`).join(' ')}]`;
  }
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
    return String(value);
  return '<nil>';
}

/** A Warning header value: `299 - "<text>"` with quotes and backslashes escaped. */
export function warningHeader(text: string): string {
  return `299 - "${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}
