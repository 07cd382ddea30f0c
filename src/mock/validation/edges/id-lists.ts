import { fieldError } from './field-error.js';

/** A list of ids must not be empty (when `nonEmptyCode` is given) and must not repeat an id. */
export function validateIdList(
  ids: readonly string[],
  field: string,
  nonEmpty: { code: 'ERR_314' | 'ERR_398'; rule: string },
): void {
  if (ids.length === 0) throw fieldError(nonEmpty.code, field, nonEmpty.rule);
  const seen = new Set<string>();
  ids.forEach((id, i) => {
    if (seen.has(id)) throw fieldError('ERR_399', `${field}[${i}]`, `"${id}" is listed more than once`);
    seen.add(id);
  });
}
