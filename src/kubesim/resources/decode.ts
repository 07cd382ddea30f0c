import type { z } from 'zod';
import type { KubeObject } from '../types.js';
import { TIME_PARSE_PREFIX } from './micro-time.js';

/**
 * Runs a resource's structural schema over a request body and renders a failure the way the
 * apiserver's decoder reports type mismatches (`Service in version "v1" cannot be handled as a
 * Service: ...`), so callers get a 400 BadRequest rather than a 422. The decoder names the
 * version without its group (`Lease in version "v1"`).
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
  const prefix = `${kind} in version "${version.split('/').pop() ?? version}" cannot be handled as a ${kind}:`;
  if (issue?.message.startsWith(TIME_PARSE_PREFIX)) return `${prefix} ${issue.message}`;
  const where = issue?.path.length ? issue.path.join('.') : 'object';
  return `${prefix} json: cannot unmarshal ${where}: ${issue?.message ?? 'invalid'}`;
}
