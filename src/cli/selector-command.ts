import { z } from 'zod';
import { ManagementClient } from '../api/client/index.js';
import { KUBERNETES_BINDING_FILTER } from '../api/schemas/endpoint.js';
import { parseEndpointUrl } from '../binding/endpoint-url.js';
import { DEFAULT_DENY, namespaceEntryProblem, namespaceNameVerdict } from '../binding/namespace-policy.js';
import { isDns1035Label } from '../binding/naming.js';
import { compileSelector, endpointView } from '../binding/selector.js';
import { toRecord } from '../controller/feed.js';
import { UsageError, type Command } from './command.js';

const usage = `Usage: endpoint-binder selector test '<CEL expression>' [--api-url <url>] [namespace options] [-o table|json]

Compiles an endpoint selector exactly as the controller does (a bad expression is reported with
its position, exit 2) and, with --api-url and ENDPOINT_BINDER_API_KEY set, evaluates it on every
cluster-bound endpoint of the account and shows which would be selected and why the others are
not. Nothing is written anywhere: try a selector here before changing the install.
A selected endpoint whose namespace the namespace policy closes by name (the deny list, the
operator namespace) is shown as namespace-denied with the rule; a namespace's labels (the
namespace selector) are checked by the controller, which sees the cluster.

Variables: endpoint.id, endpoint.url, endpoint.scheme, endpoint.host (name.namespace),
endpoint.name, endpoint.namespace, endpoint.port (int), endpoint.description, endpoint.metadata.
Example: endpoint.namespace == 'prod' && endpoint.port != 22

Options:
  --api-url <url>              management API base URL (without it, only compiles)
  --operator-namespace <ns>    the install's namespace (default endpoint-binder)
  --namespace-deny <list>      bindings.namespaces.deny, comma-separated (default kube-*,openshift,openshift-*)
  --namespace-allow <list>     bindings.namespaces.allow, comma-separated
  -o, --output <f>             table (default) or json
  -h, --help        show this help`;

const namespaceList = z
  .string()
  .transform((s) =>
    s
      .split(',')
      .map((e) => e.trim())
      .filter((e) => e.length > 0),
  )
  .superRefine((list, ctx) => {
    for (const e of list) {
      const problem = namespaceEntryProblem(e);
      if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
    }
  });

const flagSchema = z.object({
  'api-url': z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }).optional(),
  output: z.enum(['table', 'json'], { error: 'must be "table" or "json"' }).default('table'),
  'operator-namespace': z
    .string()
    .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be a namespace name')
    .default('endpoint-binder'),
  'namespace-deny': namespaceList.optional(),
  'namespace-allow': namespaceList.optional(),
});

interface Row {
  id: string;
  url: string;
  selected: boolean;
  why: string;
  /** Set when the namespace policy closes the endpoint's namespace by name. */
  namespaceDenied?: string;
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
        options: {
          'api-url': { type: 'string' },
          output: { type: 'string', short: 'o' },
          'operator-namespace': { type: 'string' },
          'namespace-deny': { type: 'string' },
          'namespace-allow': { type: 'string' },
        },
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
    const policy = {
      deny: flags.data['namespace-deny'] ?? DEFAULT_DENY,
      allow: flags.data['namespace-allow'] ?? [],
      selector: {},
    };
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
        const verdict = namespaceNameVerdict(policy, flags.data['operator-namespace'], u.value.namespace);
        const row: Row = {
          id: ep.id,
          url: ep.url,
          selected: r.selected,
          why:
            r.error !== undefined
              ? `evaluation error: ${r.error.split('\n')[0]}`
              : r.selected
                ? 'selector is true'
                : 'selector is false',
        };
        if (r.selected && !verdict.open) {
          row.namespaceDenied = verdict.rule;
          row.why = `selector is true, but namespace-denied: ${verdict.rule}`;
        }
        rows.push(row);
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
    const denied = rows.filter((r) => r.selected && r.namespaceDenied !== undefined).length;
    const closed = denied > 0 ? ` (${denied} of them namespace-denied: no alias would be written)` : '';
    process.stdout.write(`${lines.join('\n')}\n\n${n} of ${rows.length} endpoints selected${closed}\n`);
    return 0;
  },
};
