import { z } from 'zod';
import { PROJECTION_STATES } from '../../binding/types.js';
import { DataPathDocumentSchema } from './data-path.js';

/** The states `/status` reports: the projection's, plus `pending` (planned, not yet observed in the cluster). */
export const OBSERVED_STATES: readonly string[] = [
  'projected',
  'pending',
  'deleting',
  ...PROJECTION_STATES.slice(1),
];

/** What `/status` answers and `endpoint-binder status` reads (parsed with this schema on that side). */
const ServiceRefSchema = z.object({ namespace: z.string(), name: z.string() });

export const StatusDocumentSchema = z.object({
  operator: z.object({ id: z.string(), ingress: z.string().nullable() }).nullable(),
  install: z.object({ release: z.string(), operatorNamespace: z.string() }),
  selector: z.string(),
  bindingsEnabled: z.boolean(),
  leader: z.boolean(),
  /** Who holds the Lease (as this replica last saw it) and since when; why this replica cannot lead. */
  leadership: z
    .object({ holder: z.string().nullable(), since: z.string().nullable(), cannotLead: z.array(z.string()) })
    .optional(),
  ready: z.boolean(),
  /** Why not ready (the `/readyz` reasons). */
  notReadyReasons: z.array(z.string()).optional(),
  notificationsLive: z.boolean(),
  lastFullSync: z.string().nullable(),
  /**
   * A listing under way: the endpoints read so far, and the total when the API tells it (its
   * pages do not: null). Absent when no listing runs, and from older controllers.
   */
  listing: z
    .object({ listed: z.number().int().min(0), total: z.number().int().min(0).nullable() })
    .optional(),
  counts: z.record(z.string(), z.number()),
  /**
   * Services of this install whose delete was accepted and waits on finalizers (issued once,
   * then waited on; docs/controller.md "Deletion rules"). Absent from older controllers.
   */
  deleting: z.array(z.object({ namespace: z.string(), name: z.string(), reason: z.string() })).optional(),
  /**
   * Endpoints nominated for deletion (a listing lacked them, a notification said so) and not
   * proven gone yet: their projections stay (docs/controller.md "Deletion"). Absent from older controllers.
   */
  deletionCandidates: z
    .array(
      z.object({ id: z.string(), reason: z.string(), since: z.string(), lastError: z.string().optional() }),
    )
    .optional(),
  /**
   * The forwarders as last gathered (issue #27 item 5): which were read, which are unknown and
   * why. Absent with bindings disabled, and from older controllers.
   */
  dataPath: DataPathDocumentSchema.optional(),
  /**
   * Aliases of this install's form that no live projection backs (lost `managed-by`, or named by
   * no internal Service of ours): never deleted by the controller, listed here with the fix
   * (docs/controller.md "Ownership"). Absent from older controllers.
   */
  leftBehind: z
    .object({
      count: z.number().int().min(0),
      aliases: z.array(z.object({ namespace: z.string(), name: z.string(), reason: z.string() })),
    })
    .optional(),
  endpoints: z.array(
    z.object({
      id: z.string(),
      url: z.string(),
      state: z.enum(OBSERVED_STATES as [string, ...string[]]),
      reason: z.string(),
      internalService: ServiceRefSchema.optional(),
      aliasService: ServiceRefSchema.optional(),
      targetPort: z.number().int().optional(),
      /** The DATA PATH cell: the forwarders' newest observation of it, or "unknown (why)". */
      dataPath: z.string().optional(),
    }),
  ),
});
export type StatusDocument = z.infer<typeof StatusDocumentSchema>;

export function stateCounts(statuses: readonly { state: string }[]): Record<string, number> {
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
export function formatStatusTable(
  doc: StatusDocument,
  /** The forwarders' data-path observations (the document's `dataPath`): a DATA PATH column and header notes. */
  dataPath?: { cells: ReadonlyMap<string, string>; notes: readonly string[] },
): string {
  const header = ['ENDPOINT', 'URL', 'STATE', 'ALIAS', 'INTERNAL SERVICE', 'TARGET PORT', 'REASON'];
  if (dataPath) header.push('DATA PATH');
  const order = new Map<string, number>(OBSERVED_STATES.map((s, i) => [s, i]));
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
    ...(dataPath ? [dataPath.cells.get(e.id) ?? '-'] : []),
  ]);
  const summary = OBSERVED_STATES.map((s): [string, number] => [s, doc.counts[s] ?? 0])
    .filter(([, n]) => n > 0)
    .map(([s, n]) => `${n} ${s}`)
    .join(', ');
  const l = doc.leadership;
  const role = doc.leader
    ? 'leader (this replica writes)'
    : `follower (writes happen on the leader${l?.holder ? ` ${l.holder}` : ''})`;
  const head = [
    `operator: ${doc.operator?.id ?? '(not registered yet)'}   install: ${doc.install.release} in ${doc.install.operatorNamespace}   ${role}   ${doc.ready ? 'ready' : 'not ready'}`,
    ...(l
      ? [`lease: ${l.holder ? `held by ${l.holder}${l.since ? ` since ${l.since}` : ''}` : 'held by nobody'}`]
      : []),
    ...(l?.cannotLead ?? []).map((r) => `cannot lead: ${r}`),
    ...(!doc.ready ? (doc.notReadyReasons ?? []).map((r) => `not ready: ${r}`) : []),
    `selector: ${doc.selector}${doc.bindingsEnabled ? '' : '   (bindings disabled)'}`,
    `notifications: ${doc.notificationsLive ? 'live' : 'down (polling)'}   last full sync: ${doc.lastFullSync ?? 'never'}`,
    ...(dataPath?.notes ?? []),
    ...(doc.deleting ?? []).map((d) => `deleting: ${d.namespace}/${d.name} ${d.reason}`),
    ...(doc.leftBehind?.aliases ?? []).map((a) => `left behind: ${a.namespace}/${a.name} ${a.reason}`),
    '',
  ];
  const body =
    doc.endpoints.length === 0 ? 'No cluster-bound endpoints in the account.' : pad([header, ...rows]);
  return `${head.join('\n')}${body}\n\n${doc.endpoints.length} endpoints${summary ? `: ${summary}` : ''}\n`;
}
