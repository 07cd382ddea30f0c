import type { StatusCause } from '../status.js';
import { errors, type ApiError } from '../status.js';

/**
 * A field error as k8s.io/apimachinery/pkg/util/validation/field formats it. The wording of each
 * type is copied from field.ErrorType.String() and field.Error.ErrorBody() so that messages and
 * `causes[]` read exactly like a real API server's 422 answers.
 */
export type FieldErrorType =
  | 'FieldValueRequired'
  | 'FieldValueInvalid'
  | 'FieldValueDuplicate'
  | 'FieldValueNotSupported'
  | 'FieldValueForbidden'
  | 'FieldValueTooLong';

export interface FieldError {
  type: FieldErrorType;
  field: string;
  /** Pre-rendered Go-style value (`"abc"`, `0`, `["a"]`), or undefined when not shown. */
  value?: string;
  detail: string;
}

/** Go's %#v-ish rendering used in "Invalid value: ..." messages. */
export function goValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  // Since 1.32 field errors print lists as JSON (`["a","b"]`), no longer Go syntax.
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) {
    return `[${value.map((v) => JSON.stringify(v)).join(',')}]`;
  }
  if (value === null || value === undefined) return 'null';
  return JSON.stringify(value);
}

export const field = {
  required(path: string, detail = ''): FieldError {
    return { type: 'FieldValueRequired', field: path, detail };
  },
  invalid(path: string, value: unknown, detail: string): FieldError {
    return { type: 'FieldValueInvalid', field: path, value: goValue(value), detail };
  },
  /** For values whose Go rendering we hard-code (e.g. `0x0` for a uint64 resourceVersion). */
  invalidRaw(path: string, rendered: string, detail: string): FieldError {
    return { type: 'FieldValueInvalid', field: path, value: rendered, detail };
  },
  duplicate(path: string, rendered: string): FieldError {
    return { type: 'FieldValueDuplicate', field: path, value: rendered, detail: '' };
  },
  notSupported(path: string, value: unknown, supported: string[]): FieldError {
    const list = supported.map((s) => JSON.stringify(s)).join(', ');
    return {
      type: 'FieldValueNotSupported',
      field: path,
      value: goValue(value),
      detail: `supported values: ${list}`,
    };
  },
  forbidden(path: string, detail: string): FieldError {
    return { type: 'FieldValueForbidden', field: path, detail };
  },
};

const TYPE_TEXT: Record<FieldErrorType, string> = {
  FieldValueRequired: 'Required value',
  FieldValueInvalid: 'Invalid value',
  FieldValueDuplicate: 'Duplicate value',
  FieldValueNotSupported: 'Unsupported value',
  FieldValueForbidden: 'Forbidden',
  FieldValueTooLong: 'Too long',
};

/** field.Error.ErrorBody(): the cause message, without the field path. */
export function errorBody(e: FieldError): string {
  let s = TYPE_TEXT[e.type];
  if (e.value !== undefined && e.type !== 'FieldValueRequired' && e.type !== 'FieldValueForbidden') {
    s += `: ${e.value}`;
  }
  if (e.detail) s += `: ${e.detail}`;
  return s;
}

/** Builds the 422 Invalid ApiError for a list of field errors (apierrors.NewInvalid). */
export function invalidError(group: string, kindLabel: string, name: string, errs: FieldError[]): ApiError {
  const causes: StatusCause[] = errs.map((e) => ({ reason: e.type, message: errorBody(e), field: e.field }));
  const messages = errs.map((e) => `${e.field}: ${errorBody(e)}`);
  return errors.invalid(group, kindLabel, name, causes, messages);
}
