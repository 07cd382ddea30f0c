import { MockError } from '../http/errors.js';

/** PATCH must change something: an update with no fields is a 400, not a silent no-op. */
export function requireNonEmptyUpdate<T extends object>(input: T): T {
  if (Object.values(input).every((v) => v === undefined)) {
    throw new MockError('ERR_123', 'an update must set at least one field');
  }
  return input;
}
