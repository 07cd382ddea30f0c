import type { EndpointUserAgentFilterInput } from '../../../api/schemas/modules/user-agent-filter.js';
import { fieldError } from './field-error.js';

/** Every allow/deny entry must compile as a regular expression; the message names the entry. */
export function validateUserAgentFilter(input: EndpointUserAgentFilterInput, field: string): void {
  for (const list of ['allow', 'deny'] as const) {
    (input[list] ?? []).forEach((pattern, i) => {
      try {
        new RegExp(pattern);
      } catch (err) {
        const why = err instanceof Error ? err.message : String(err);
        throw fieldError(
          'ERR_395',
          `${field}.${list}[${i}]`,
          `"${pattern}" is not a valid regular expression: ${why}`,
        );
      }
    });
  }
}
