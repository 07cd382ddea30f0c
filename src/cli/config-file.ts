import { readFile } from 'node:fs/promises';
import type { z } from 'zod';
import { UsageError } from './command.js';
import { parseConfigText } from './config-text.js';

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
  const raw = parseConfigText(text, path);
  const parsed = schema.safeParse(raw ?? {});
  if (!parsed.success) throw new UsageError(`config file ${path}:\n${formatIssues(parsed.error.issues)}`);
  return parsed.data;
}

/** Every issue on its own line as `field.path: message`, so a bad config is fixed in one go. */
export function formatIssues(issues: readonly z.core.$ZodIssue[]): string {
  return issues.map((i) => `  ${i.path.map(String).join('.') || '(root)'}: ${i.message}`).join('\n');
}
