import { parseArgs } from 'node:util';
import { z } from 'zod';
import { UsageError } from './command.js';

export type FlagSpec = Record<string, { type: 'string' | 'boolean'; multiple?: boolean; short?: string }>;

/**
 * Parses `--flag value` arguments strictly (unknown flags are an error), then validates the
 * values with zod so every flag reaches the program as a typed value. Errors name the flag.
 */
export function parseFlags<S extends z.ZodType>(argv: string[], spec: FlagSpec, schema: S): z.infer<S> {
  let values: Record<string, unknown>;
  try {
    values = parseArgs({ args: argv, options: spec, strict: true, allowPositionals: false }).values;
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
  const parsed = schema.safeParse(values);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const flag = issue?.path.length ? `--${issue.path.join('.')}` : 'flags';
    throw new UsageError(`${flag}: ${issue?.message ?? 'invalid value'}`);
  }
  return parsed.data;
}

/** A flag holding a TCP port number; 0 lets the OS choose. */
export const portFlag = z.coerce.number().int().min(0).max(65535);
