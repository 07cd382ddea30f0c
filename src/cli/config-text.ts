import { parse as parseYaml } from 'yaml';
import { documentNesting } from '../config/document-nesting.js';
import { UsageError } from './command.js';

/** Config files are small; these bounds keep a malformed or hostile one from costing seconds or gigabytes. */
export const MAX_CONFIG_BYTES = 1024 * 1024;
export const MAX_CONFIG_NESTING = 64;

/** Parses a YAML/JSON config file's text within bounds; errors name the file. */
export function parseConfigText(text: string, path: string): unknown {
  const bytes = Buffer.byteLength(text);
  if (bytes > MAX_CONFIG_BYTES) {
    throw new UsageError(`config file ${path} is ${bytes} bytes; at most ${MAX_CONFIG_BYTES} are read`);
  }
  const depth = documentNesting(text, MAX_CONFIG_NESTING + 1);
  if (depth > MAX_CONFIG_NESTING) {
    throw new UsageError(`config file ${path} nests deeper than ${MAX_CONFIG_NESTING} levels`);
  }
  try {
    return parseYaml(text, { maxAliasCount: 100 });
  } catch (err) {
    throw new UsageError(
      `config file ${path} is not valid YAML/JSON: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
}
