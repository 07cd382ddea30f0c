import { z } from 'zod';
import { ManagementClient } from '../api/client/index.js';
import { KUBERNETES_BINDING_FILTER } from '../api/schemas/endpoint.js';
import { parseEndpointUrl } from '../binding/endpoint-url.js';
import { isDns1035Label } from '../binding/naming.js';
import { compileSelector, endpointView } from '../binding/selector.js';
import { toRecord } from '../controller/feed.js';
import { UsageError, type Command } from './command.js';

const usage = `Usage: endpoint-binder selector test '<CEL expression>' [--api-url <url>] [-o table|json]

Compiles an endpoint selector exactly as the controller does (a bad expression is reported with
its position, exit 2) and, with --api-url and ENDPOINT_BINDER_API_KEY set, evaluates it on every
cluster-bound endpoint of the account and shows which would be selected and why the others are
not. Nothing is written anywhere: try a selector here before changing the install.

Variables: endpoint.id, endpoint.url, endpoint.scheme, endpoint.host (name.namespace),
endpoint.name, endpoint.namespace, endpoint.port (int), endpoint.description, endpoint.metadata.
Example: endpoint.namespace == 'prod' && endpoint.port != 22

Options:
  --api-url <url>   management API base URL (without it, only compiles)
  -o, --output <f>  table (default) or json
  -h, --help        show this help`;

const flagSchema = z.object({
  'api-url': z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }).optional(),
  output: z.enum(['table', 'json'], { error: 'must be "table" or "json"' }).default('table'),
});

interface Row {
  id: string;
  url: string;
  selected: boolean;
  why: string;
}

export const selectorCommand: Command = {
  name: 'selector',
  summary: 'Try an endpoint selector against the account before using it (selector test)',
  usage,
  async run(argv) {
    const { parseArgs } = await import('node:util');
    let parsed;
    try {
      parsed = parseArgs({
        args: argv,
        options: { 'api-url': { type: 'string' }, output: { type: 'string', short: 'o' } },
        allowPositionals: true,
        strict: true,
      });
    } catch (err) {
      throw new UsageError(err instanceof Error ? err.message : String(err));
    }
    const [sub, expression, ...extra] = parsed.positionals;
    if (sub !== 'test') throw new UsageError('the only subcommand is "selector test \'<expression>\'"');
    if (expression === undefined)
      throw new UsageError('give the selector expression as one argument (quote it)');
    if (extra.length > 0)
      throw new UsageError(`one expression only; quote it (got ${extra.length + 1} arguments)`);
    const flags = flagSchema.safeParse(parsed.values);
    if (!flags.success) {
      const i = flags.error.issues[0];
      throw new UsageError(`--${i?.path.join('.') ?? ''}: ${i?.message ?? 'invalid'}`);
    }
    const compiled = compileSelector(expression);
    if (!compiled.ok) {
      process.stderr.write(`endpoint-binder selector: ${compiled.message}\n`);
      return 2;
    }
    const apiUrl = flags.data['api-url'];
    if (!apiUrl) {
      process.stdout.write('selector compiles and type-checks; give --api-url to try it on the account\n');
      return 0;
    }
    const apiKey = process.env['ENDPOINT_BINDER_API_KEY'];
    if (!apiKey) throw new UsageError("ENDPOINT_BINDER_API_KEY must be set to read the account's endpoints");
    const client = new ManagementClient({ baseUrl: apiUrl, apiKey, retry: { retries: 2 } });
    const rows: Row[] = [];
    try {
      for await (const ep of client.endpoints.list({ filter: KUBERNETES_BINDING_FILTER })) {
        const u = parseEndpointUrl(ep.url);
        if (!u.ok) {
          rows.push({ id: ep.id, url: ep.url, selected: false, why: `invalid URL: ${u.message}` });
          continue;
        }
        if (!isDns1035Label(u.value.name)) {
          rows.push({
            id: ep.id,
            url: ep.url,
            selected: false,
            why: `invalid URL: "${u.value.name}" cannot be a Service name`,
          });
          continue;
        }
        const r = compiled.selector.evaluate(endpointView(toRecord(ep), u.value));
        rows.push({
          id: ep.id,
          url: ep.url,
          selected: r.selected,
          why:
            r.error !== undefined
              ? `evaluation error: ${r.error.split('\n')[0]}`
              : r.selected
                ? 'selector is true'
                : 'selector is false',
        });
      }
    } finally {
      await client.close();
    }
    if (flags.data.output === 'json') {
      process.stdout.write(`${JSON.stringify({ expression, endpoints: rows }, null, 2)}\n`);
      return 0;
    }
    const header = ['ENDPOINT', 'URL', 'SELECTED', 'WHY'];
    const table = [header, ...rows.map((r) => [r.id, r.url, r.selected ? 'yes' : 'no', r.why])];
    const widths = header.map((_, i) => Math.max(...table.map((t) => t[i]!.length)));
    const lines = table.map((t) =>
      t.map((c, i) => (i === t.length - 1 ? c : c.padEnd(widths[i]!))).join('   '),
    );
    const n = rows.filter((r) => r.selected).length;
    process.stdout.write(`${lines.join('\n')}\n\n${n} of ${rows.length} endpoints selected\n`);
    return 0;
  },
};
