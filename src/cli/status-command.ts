import { request } from 'undici';
import { z } from 'zod';
import { StatusDocumentSchema, formatStatusTable } from '../controller/status.js';
import { UsageError, type Command } from './command.js';
import { parseFlags } from './flags.js';
import { writeOut } from './output.js';
import { dataPathView, readForwarderStatus } from './status-data-path.js';

const usage = `Usage: endpoint-binder status [--url <controller http url>] [--forwarder-url <url>]... [-o table|json]

Prints every cluster-bound endpoint of the account with its state as the cluster holds it
(projected: both Services observed as planned; pending: planned, not yet observed, with what is
missing; or namespace-missing, name-conflict, port-conflict, invalid-url, not-selected,
ports-exhausted, error), the reason, its alias and internal Service and forwarder port, from a
running controller's /status. Any replica answers from its own caches; the header names the Lease
holder and, when this replica cannot lead, why. With --forwarder-url, a DATA PATH column shows what
the forwarders observed of each endpoint's last connection (ok 2s ago, upstream refused (ERR_730)
5s ago, no traffic yet), and a header line names each forwarder that could not be read.

In a cluster (any replica): kubectl -n <operator-ns> exec deploy/<release>-controller -- endpoint-binder status
Exit codes: 0 printed, 1 the controller could not be read, 2 bad flags.

Options:
  --url <url>       the controller's HTTP server (default http://127.0.0.1:8080)
  --forwarder-url <url>  a forwarder's HTTP server to read /status from (repeatable)
  -o, --output <f>  table (default) or json
  -h, --help        show this help`;

const flagSpec = {
  url: { type: 'string' },
  'forwarder-url': { type: 'string', multiple: true },
  output: { type: 'string', short: 'o' },
} as const;

const flagSchema = z.object({
  url: z
    .url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' })
    .default('http://127.0.0.1:8080'),
  'forwarder-url': z
    .array(z.url({ protocol: /^https?$/, error: '--forwarder-url: must be an http:// or https:// URL' }))
    .default([]),
  output: z.enum(['table', 'json'], { error: 'must be "table" or "json"' }).default('table'),
});

export const statusCommand: Command = {
  name: 'status',
  summary: 'Show every endpoint and its projection state (from a running controller)',
  usage,
  async run(argv) {
    const flags = parseFlags(argv, flagSpec, flagSchema);
    const url = `${flags.url.replace(/\/$/, '')}/status`;
    let text: string;
    try {
      const res = await request(url, { headersTimeout: 10_000, bodyTimeout: 10_000 });
      text = await res.body.text();
      if (res.statusCode !== 200) throw new Error(`HTTP ${res.statusCode}: ${text.slice(0, 200)}`);
    } catch (err) {
      process.stderr.write(
        `endpoint-binder status: cannot read ${url}: ${err instanceof Error ? err.message : String(err)}; is the controller running, and is --url its HTTP server (http.listen)?\n`,
      );
      return 1;
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new UsageError(`${url} did not answer JSON; is --url the controller's HTTP server?`);
    }
    const doc = StatusDocumentSchema.safeParse(json);
    if (!doc.success)
      throw new UsageError(`${url} did not answer a status document: ${doc.error.issues[0]?.message ?? ''}`);
    const forwarders = flags['forwarder-url'];
    const answers = await Promise.all(forwarders.map((u) => readForwarderStatus(u)));
    const view = forwarders.length ? dataPathView(doc.data.endpoints, answers) : undefined;
    const out = view
      ? {
          ...doc.data,
          endpoints: doc.data.endpoints.map((e) => ({ ...e, dataPath: view.cells.get(e.id) })),
          forwarders: answers.map((a) =>
            a.ok ? { url: a.url, read: true } : { url: a.url, read: false, problem: a.problem },
          ),
        }
      : doc.data;
    await writeOut(
      flags.output === 'json' ? `${JSON.stringify(out, null, 2)}\n` : formatStatusTable(doc.data, view),
    );
    return 0;
  },
};
