import { z } from 'zod';
import { StatusDocumentSchema } from '../controller/decide/status.js';
import { UsageError, type Command } from './command.js';
import { parseFlags } from './flags.js';
import { getText } from '../net/http-get.js';
import { writeOut } from './output.js';
import { ListingProgressSchema, statusText } from './status-view.js';

const usage = `Usage: endpoint-binder status [--url <controller http url>] [--forwarder-url <url>]... [-o table|json]

Prints every cluster-bound endpoint of the account with its state as the cluster holds it
(projected: both Services observed as planned; pending: planned, not yet observed, with what is
missing; or namespace-missing, name-conflict, port-conflict, invalid-url, not-selected,
ports-exhausted, error), the reason, its alias and internal Service and forwarder port, from a
running controller's /status. Each replica answers from its own caches, and only the leader
writes: a follower's view can lag (during the leader's first sync it may show name-conflict for
aliases the leader is writing), so for the state of the writes ask the Lease holder the header
names. Before the first complete listing it says "not yet listed" (with N of M when the controller
reports it), never "0 endpoints". The DATA PATH column shows what the forwarders observed of
each endpoint's last connection (ok 2s ago, upstream refused (ERR_730) 5s ago, no traffic yet):
the controller reads every forwarder pod's /status every 10 s, and says "unknown (why)" where it
could not read one (a header line names each such forwarder, and each one not ready, with its
reasons); "(1 of 2 forwarders read)" when only some were. --forwarder-url reads the forwarders
you name instead (from where you run status), e.g. when the controller cannot reach them.

In a cluster (any replica): kubectl -n <operator-ns> exec deploy/<release>-controller -- endpoint-binder status
Exit codes: 0 printed, 1 the controller could not be read, 2 bad flags.

Options:
  --url <url>       the controller's HTTP server (default http://127.0.0.1:8080)
  --forwarder-url <url>  read this forwarder's /status for DATA PATH instead of the controller's
                    gathering (repeatable)
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
      const res = await getText(url, 10_000);
      text = res.text;
      if (res.statusCode === 404) {
        process.stderr.write(`endpoint-binder status: ${await notServingYet(flags.url)}\n`);
        return 1;
      }
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
    // Loaded only when asked: reading forwarders pulls in undici, which the plain call does not need.
    const out = forwarders.length
      ? await (await import('./status-data-path.js')).withForwarders(doc.data, forwarders)
      : doc.data;
    const progress = ListingProgressSchema.safeParse(json);
    await writeOut(
      flags.output === 'json'
        ? `${JSON.stringify(out, null, 2)}\n`
        : statusText(out, progress.success ? progress.data.listing : undefined),
    );
    return 0;
  },
};

const ReadyzAnswer = z.object({ ready: z.boolean(), reasons: z.array(z.string()).default([]) }).loose();

/**
 * Why a controller answers 404 on /status: during its preflight (before it has registered) it
 * serves only its probes. One line with /readyz's reasons, or what it is if not that.
 */
async function notServingYet(base: string): Promise<string> {
  const readyz = `${base.replace(/\/$/, '')}/readyz`;
  try {
    const res = await getText(readyz, 5_000);
    const body = ReadyzAnswer.safeParse(JSON.parse(res.text));
    if (body.success && !body.data.ready)
      return `the controller at ${base} is starting and serves /status once it has registered (not ready: ${body.data.reasons.join('; ') || 'no reason given'}); endpoint-binder check says what it waits for`;
  } catch {
    // not a controller's /readyz either: the line below says so
  }
  return `${base} answers 404 on /status and is not a starting controller; is --url the controller's HTTP server (http.listen)?`;
}
