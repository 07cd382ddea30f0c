import type { EndpointHeadersInput } from '../../../api/schemas/modules/headers.js';
import { fieldError, keyPath } from './field-error.js';

/** RFC 9110 token: the characters a header field name may have. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** Control characters other than horizontal tab may not appear in a header value. */
function hasControlCharacter(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if ((c < 0x20 && c !== 0x09) || c === 0x7f) return true;
  }
  return false;
}

export function validateHeaders(input: EndpointHeadersInput, field: string): void {
  const lowered = new Map<string, string>();
  for (const [name, value] of Object.entries(input.add ?? {})) {
    const at = keyPath(`${field}.add`, name);
    if (!TOKEN.test(name))
      throw fieldError('ERR_390', at, `"${name}" is not a valid HTTP header name (token)`);
    if (hasControlCharacter(value)) {
      throw fieldError(
        'ERR_391',
        at,
        'the header value must not contain control characters (CR, LF, NUL, ...)',
      );
    }
    const other = lowered.get(name.toLowerCase());
    if (other !== undefined) {
      throw fieldError(
        'ERR_392',
        at,
        `"${name}" and "${other}" name the same header (names are case-insensitive)`,
      );
    }
    lowered.set(name.toLowerCase(), name);
  }
  (input.remove ?? []).forEach((name, i) => {
    if (!TOKEN.test(name)) {
      throw fieldError(
        'ERR_390',
        `${field}.remove[${i}]`,
        `"${name}" is not a valid HTTP header name (token)`,
      );
    }
  });
}
