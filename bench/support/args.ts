import { parseArgs } from 'node:util';
import type { z } from 'zod';

/**
 * The benchmarks' flags: every flag is a string option, parsed with node's parseArgs and then
 * with the benchmark's zod schema. A bad flag is one human line naming the flag and its rule on
 * stderr and exit code 2, never a stack trace.
 */
export function parseBenchArgs<S extends z.ZodType>(
  script: string,
  schema: S,
  argv: readonly string[] = process.argv.slice(2),
): z.infer<S> {
  const r = readBenchArgs(schema, argv);
  if (r.ok) return r.value;
  process.stderr.write(`${script}: ${r.error}\n`);
  process.exit(2);
}

/** Pure: the parsed flags, or the one line that says what is wrong. */
export function readBenchArgs<S extends z.ZodType>(
  schema: S,
  argv: readonly string[],
): { ok: true; value: z.infer<S> } | { ok: false; error: string } {
  const names = flagNames(schema);
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({
      args: [...argv],
      options: Object.fromEntries(names.map((n) => [n, { type: 'string' as const }])),
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (err) {
    const known = names.map((n) => `--${n}`).join(', ');
    const message = err instanceof Error ? err.message : String(err);
    const unknown = /Unknown option '([^']+)'/.exec(message);
    if (unknown) return { ok: false, error: `unknown flag ${unknown[1]}; the flags are ${known}` };
    const missing = /Option '(-[^ ']+)[^']*' argument missing/.exec(message);
    if (missing) return { ok: false, error: `${missing[1]}: needs a value` };
    const positional = /Unexpected argument '([^']+)'/.exec(message);
    if (positional)
      return {
        ok: false,
        error: `unexpected argument ${positional[1]}; every value follows its flag (${known})`,
      };
    return { ok: false, error: `${message.split('\n')[0]}; the flags are ${known}` };
  }
  const parsed = schema.safeParse(values);
  if (parsed.success) return { ok: true, value: parsed.data };
  const issue = parsed.error.issues[0]!;
  const flag = String(issue.path[0] ?? '');
  const given = values[flag];
  return { ok: false, error: `--${flag} ${JSON.stringify(given)}: ${rule(issue)}` };
}

function flagNames(schema: z.ZodType): string[] {
  const shape = (schema as unknown as { shape?: Record<string, unknown> }).shape;
  if (!shape) throw new Error('bench flags: the schema must be a z.object');
  return Object.keys(shape);
}

/** The rule an issue broke, in words. */
function rule(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case 'invalid_type':
      return issue.expected === 'int' ? 'must be a whole number' : `must be a ${issue.expected}`;
    case 'too_small':
      return `must be at least ${String(issue.minimum)}`;
    case 'too_big':
      return `must be at most ${String(issue.maximum)}`;
    default:
      return issue.message;
  }
}
