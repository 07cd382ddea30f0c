import { readFile } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';
import type { z } from 'zod';
import { UsageError } from './command.js';

/** Reads a YAML or JSON file (JSON is YAML) and validates it; errors name the file and the field. */
export async function readConfigFile<S extends z.ZodType>(path: string, schema: S): Promise<z.infer<S>> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new UsageError(
      `cannot read config file ${path}: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (err) {
    throw new UsageError(
      `config file ${path} is not valid YAML/JSON: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  const parsed = schema.safeParse(raw ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new UsageError(
      `config file ${path}: ${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}`,
    );
  }
  return parsed.data;
}
