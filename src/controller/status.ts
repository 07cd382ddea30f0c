import { z } from 'zod';
import { PROJECTION_STATES, type EndpointStatus } from '../binding/types.js';

/** What `/status` answers and `endpoint-binder status` reads (parsed with this schema on that side). */
const ServiceRefSchema = z.object({ namespace: z.string(), name: z.string() });

export const StatusDocumentSchema = z.object({
  operator: z.object({ id: z.string(), ingress: z.string().nullable() }).nullable(),
  install: z.object({ release: z.string(), operatorNamespace: z.string() }),
  selector: z.string(),
  bindingsEnabled: z.boolean(),
  leader: z.boolean(),
  ready: z.boolean(),
  notificationsLive: z.boolean(),
  lastFullSync: z.string().nullable(),
  counts: z.record(z.string(), z.number()),
  endpoints: z.array(
    z.object({
      id: z.string(),
      url: z.string(),
      state: z.enum(PROJECTION_STATES as [string, ...string[]]),
      reason: z.string(),
      internalService: ServiceRefSchema.optional(),
      aliasService: ServiceRefSchema.optional(),
      targetPort: z.number().int().optional(),
    }),
  ),
});
export type StatusDocument = z.infer<typeof StatusDocumentSchema>;

export function stateCounts(statuses: readonly EndpointStatus[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const s of statuses) counts[s.state] = (counts[s.state] ?? 0) + 1;
  return counts;
}

function pad(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows
    .map((r) =>
      r
        .map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!)))
        .join('   ')
        .trimEnd(),
    )
    .join('\n');
}

/** The table `endpoint-binder status` prints: one line per endpoint, then a summary. Pure. */
export function formatStatusTable(doc: StatusDocument): string {
  const header = ['ENDPOINT', 'URL', 'STATE', 'ALIAS', 'INTERNAL SERVICE', 'TARGET PORT', 'REASON'];
  const order = new Map<string, number>(PROJECTION_STATES.map((s, i) => [s, i]));
  const sorted = [...doc.endpoints].sort(
    (a, b) => (order.get(a.state) ?? 0) - (order.get(b.state) ?? 0) || a.url.localeCompare(b.url),
  );
  const rows = sorted.map((e) => [
    e.id,
    e.url,
    e.state,
    e.aliasService ? `${e.aliasService.name}.${e.aliasService.namespace}` : '-',
    e.internalService ? `${e.internalService.namespace}/${e.internalService.name}` : '-',
    e.targetPort !== undefined ? String(e.targetPort) : '-',
    e.reason || '-',
  ]);
  const summary = PROJECTION_STATES.map((s): [string, number] => [s, doc.counts[s] ?? 0])
    .filter(([, n]) => n > 0)
    .map(([s, n]) => `${n} ${s}`)
    .join(', ');
  const head = [
    `operator: ${doc.operator?.id ?? '(not registered yet)'}   install: ${doc.install.release} in ${doc.install.operatorNamespace}   ${doc.leader ? 'leader' : 'follower'}   ${doc.ready ? 'ready' : 'not ready'}`,
    `selector: ${doc.selector}${doc.bindingsEnabled ? '' : '   (bindings disabled)'}`,
    `notifications: ${doc.notificationsLive ? 'live' : 'down (polling)'}   last full sync: ${doc.lastFullSync ?? 'never'}`,
    '',
  ];
  const body =
    doc.endpoints.length === 0 ? 'No cluster-bound endpoints in the account.' : pad([header, ...rows]);
  return `${head.join('\n')}${body}\n\n${doc.endpoints.length} endpoints${summary ? `: ${summary}` : ''}\n`;
}
