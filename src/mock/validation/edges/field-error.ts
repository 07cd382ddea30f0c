import type { ErrorCode } from '../../../api/error-codes/index.js';
import { MockError } from '../../http/errors.js';

/** A 400 naming the field (a path like `body.oauth.provider.github.teams[0]`) and the rule it broke. */
export function fieldError(code: ErrorCode, field: string, rule: string): MockError {
  return new MockError(code, `${field}: ${rule}`, { field });
}

/** Renders a map key into a field path: `add["X-Custom-Header"]`. */
export function keyPath(field: string, key: string): string {
  return `${field}[${JSON.stringify(key)}]`;
}
