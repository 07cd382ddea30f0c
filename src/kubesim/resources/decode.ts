import type { z } from 'zod';
import type { KubeObject } from '../types.js';

/**
 * Runs a resource's structural schema over a request body and renders a failure the way the
 * apiserver's decoder reports type mismatches (`Service in version "v1" cannot be handled as a
 * Service: ...`), so callers get a 400 BadRequest rather than a 422.
 */
export function decodeWith(
  schema: z.ZodType,
  obj: KubeObject,
  kind: string,
  version: string,
): string | undefined {
  const parsed = schema.safeParse(obj);
  if (parsed.success) return undefined;
  const issue = parsed.error.issues[0];
  const where = issue?.path.length ? issue.path.join('.') : 'object';
  return `${kind} in version "${version}" cannot be handled as a ${kind}: json: cannot unmarshal ${where}: ${issue?.message ?? 'invalid'}`;
}
