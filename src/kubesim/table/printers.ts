import { z } from 'zod';
import type { KubeObject } from '../types.js';
import {
  AGE_DOC,
  ageCol,
  col,
  formatLabels,
  nameCol,
  optNum,
  optStr,
  view,
  type Cell,
  type ColumnDefinition,
  type Printer,
} from './columns.js';
import { since } from './duration.js';
import { CONFIG_PRINTERS } from './config-printers.js';
import { POLICY_PRINTERS } from './policy-printers.js';
import { WORKLOAD_PRINTERS } from './workload-printers.js';

export type { Cell, ColumnDefinition, Printer } from './columns.js';
export { formatLabels } from './columns.js';

/**
 * The server-side printers of pkg/printers/internalversion for the kinds kubesim stores: column
 * definitions and row cells exactly as kube-apiserver generates them (always the wide variant;
 * kubectl hides priority > 0 columns unless `-o wide`).
 */

const serviceView = z.looseObject({
  spec: z
    .looseObject({
      type: optStr,
      clusterIPs: z.array(z.string()).optional().catch(undefined),
      externalIPs: z.array(z.string()).optional().catch(undefined),
      externalName: optStr,
      selector: z.record(z.string(), z.string()).optional().catch(undefined),
      ports: z
        .array(z.looseObject({ port: optNum, nodePort: optNum, protocol: optStr }))
        .optional()
        .catch(undefined),
    })
    .optional()
    .catch(undefined),
  status: z
    .looseObject({
      loadBalancer: z
        .looseObject({
          ingress: z
            .array(z.looseObject({ ip: optStr, hostname: optStr }))
            .optional()
            .catch(undefined),
        })
        .optional()
        .catch(undefined),
    })
    .optional()
    .catch(undefined),
});
type ServiceView = z.infer<typeof serviceView>;

/** loadBalancerStatusStringer in wide mode: the sorted, de-duplicated ingress IPs or hostnames. */
function loadBalancerIngress(svc: ServiceView): string {
  const set = new Set<string>();
  for (const i of svc.status?.loadBalancer?.ingress ?? []) {
    if (i.ip) set.add(i.ip);
    else if (i.hostname) set.add(i.hostname);
  }
  return [...set].sort().join(',');
}

/** getServiceExternalIP. */
function externalIP(svc: ServiceView): string {
  const spec = svc.spec ?? {};
  const external = spec.externalIPs ?? [];
  switch (spec.type) {
    case 'ClusterIP':
    case 'NodePort':
      return external.length > 0 ? external.join(',') : '<none>';
    case 'LoadBalancer': {
      const lb = loadBalancerIngress(svc);
      if (external.length > 0) return [...(lb ? lb.split(',') : []), ...external].join(',');
      return lb || '<pending>';
    }
    case 'ExternalName':
      return spec.externalName ?? '';
    default:
      return '<unknown>';
  }
}

/** makePortString: `80/TCP`, `80:30080/TCP` with a node port. */
function portString(svc: ServiceView): string {
  return (svc.spec?.ports ?? [])
    .map((p) => {
      const proto = p.protocol ?? '';
      return p.nodePort && p.nodePort > 0
        ? `${p.port ?? 0}:${p.nodePort}/${proto}`
        : `${p.port ?? 0}/${proto}`;
    })
    .join(',');
}

const servicePrinter: Printer = {
  columns: [
    nameCol(),
    col('Type', 'type determines how the Service is exposed.'),
    col('Cluster-IP', 'clusterIP is the IP address of the service and is usually assigned randomly.'),
    col(
      'External-IP',
      'externalIPs is a list of IP addresses for which nodes in the cluster will also accept traffic for this service.',
    ),
    col('Port(s)', 'The list of ports that are exposed by this service.'),
    ageCol(),
    col(
      'Selector',
      'Route service traffic to pods with label keys and values matching this selector. If empty or not present, the service is assumed to have an external process managing its endpoints.',
      { priority: 1 },
    ),
  ],
  cells(obj, now) {
    const svc = view(serviceView, obj) ?? {};
    const ports = portString(svc);
    return [
      obj.metadata.name,
      svc.spec?.type ?? '',
      svc.spec?.clusterIPs?.[0] ?? '<none>',
      externalIP(svc),
      ports === '' ? '<none>' : ports,
      since(obj.metadata.creationTimestamp, now),
      formatLabels(svc.spec?.selector),
    ];
  },
};

const namespaceView = z.looseObject({
  status: z.looseObject({ phase: optStr }).optional().catch(undefined),
});

const namespacePrinter: Printer = {
  columns: [nameCol(), col('Status', 'The status of the namespace'), ageCol()],
  cells(obj, now) {
    const ns = view(namespaceView, obj);
    return [obj.metadata.name, ns?.status?.phase ?? '', since(obj.metadata.creationTimestamp, now)];
  },
};

const leaseView = z.looseObject({
  spec: z.looseObject({ holderIdentity: optStr }).optional().catch(undefined),
});

const leasePrinter: Printer = {
  columns: [
    nameCol(),
    col('Holder', 'holderIdentity contains the identity of the holder of a current lease.'),
    ageCol(),
  ],
  cells(obj, now) {
    const lease = view(leaseView, obj);
    return [obj.metadata.name, lease?.spec?.holderIdentity ?? '', since(obj.metadata.creationTimestamp, now)];
  },
};

const objectRef = z
  .looseObject({ kind: optStr, name: optStr, fieldPath: optStr })
  .optional()
  .catch(undefined);
const source = z.looseObject({ component: optStr, host: optStr }).optional().catch(undefined);
const series = z.looseObject({ count: optNum, lastObservedTime: optStr }).optional().catch(undefined);

/** The fields printEvent reads, in the internal (core) naming. */
interface EventFields {
  firstTimestamp?: string | undefined;
  lastTimestamp?: string | undefined;
  eventTime?: string | undefined;
  count?: number | undefined;
  series?: { count?: number | undefined; lastObservedTime?: string | undefined } | undefined;
  involvedObject?:
    { kind?: string | undefined; name?: string | undefined; fieldPath?: string | undefined } | undefined;
  source?: { component?: string | undefined; host?: string | undefined } | undefined;
  reportingController?: string | undefined;
  reportingInstance?: string | undefined;
  type?: string | undefined;
  reason?: string | undefined;
  message?: string | undefined;
}

const coreEventView = z.looseObject({
  firstTimestamp: optStr,
  lastTimestamp: optStr,
  eventTime: optStr,
  count: optNum,
  series,
  involvedObject: objectRef,
  source,
  reportingComponent: optStr,
  reportingInstance: optStr,
  type: optStr,
  reason: optStr,
  message: optStr,
});

const eventsV1View = z.looseObject({
  deprecatedFirstTimestamp: optStr,
  deprecatedLastTimestamp: optStr,
  eventTime: optStr,
  deprecatedCount: optNum,
  series,
  regarding: objectRef,
  deprecatedSource: source,
  reportingController: optStr,
  reportingInstance: optStr,
  type: optStr,
  reason: optStr,
  note: optStr,
});

function coreEventFields(obj: KubeObject): EventFields {
  const e = view(coreEventView, obj) ?? {};
  return { ...e, reportingController: e.reportingComponent };
}

/** events.k8s.io/v1 converted to the internal Event the printer works on. */
function eventsV1Fields(obj: KubeObject): EventFields {
  const e = view(eventsV1View, obj) ?? {};
  return {
    firstTimestamp: e.deprecatedFirstTimestamp,
    lastTimestamp: e.deprecatedLastTimestamp,
    eventTime: e.eventTime,
    count: e.deprecatedCount,
    series: e.series,
    involvedObject: e.regarding,
    source: e.deprecatedSource,
    reportingController: e.reportingController,
    reportingInstance: e.reportingInstance,
    type: e.type,
    reason: e.reason,
    message: e.note,
  };
}

/** printEvent (wide). */
function eventCells(obj: KubeObject, e: EventFields, now: number): Cell[] {
  const first = e.firstTimestamp ? since(e.firstTimestamp, now) : since(e.eventTime, now);
  let last = e.lastTimestamp ? since(e.lastTimestamp, now) : first;
  let count = e.count ?? 0;
  if (e.series) {
    last = since(e.series.lastObservedTime, now);
    count = e.series.count ?? 0;
  } else if (count === 0) {
    count = 1; // singleton events carry no count in the new API
  }
  const kind = (e.involvedObject?.kind ?? '').toLowerCase();
  const target = e.involvedObject?.name ? `${kind}/${e.involvedObject.name}` : kind;
  const component = e.source?.component || e.reportingController || '';
  const instance = e.source?.host || e.reportingInstance || '';
  return [
    last,
    e.type ?? '',
    e.reason ?? '',
    target,
    e.involvedObject?.fieldPath ?? '',
    instance ? `${component}, ${instance}` : component,
    (e.message ?? '').trim(),
    first,
    count,
    obj.metadata.name,
  ];
}

const eventColumns: ColumnDefinition[] = [
  col('Last Seen', 'The time at which the most recent occurrence of this event was recorded.'),
  col('Type', 'Type of this event (Normal, Warning), new types could be added in the future'),
  col(
    'Reason',
    "This should be a short, machine understandable string that gives the reason for the transition into the object's current status.",
  ),
  col('Object', 'The object that this event is about.'),
  col(
    'Subobject',
    'If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement.',
    { priority: 1 },
  ),
  col('Source', 'The component reporting this event. Should be a short machine understandable string.', {
    priority: 1,
  }),
  col('Message', 'A human-readable description of the status of this operation.'),
  col(
    'First Seen',
    'The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)',
    { priority: 1 },
  ),
  col('Count', 'The number of times this event has occurred.', { priority: 1 }),
  nameCol({ priority: 1 }),
];

const PRINTERS: Record<string, Printer> = {
  '/Service': servicePrinter,
  '/Namespace': namespacePrinter,
  'coordination.k8s.io/Lease': leasePrinter,
  '/Event': { columns: eventColumns, cells: (obj, now) => eventCells(obj, coreEventFields(obj), now) },
  'events.k8s.io/Event': {
    columns: eventColumns,
    cells: (obj, now) => eventCells(obj, eventsV1Fields(obj), now),
  },
  ...WORKLOAD_PRINTERS,
  ...POLICY_PRINTERS,
  ...CONFIG_PRINTERS,
};

/** rest.NewDefaultTableConvertor: what a real server prints for kinds without a printer. */
const defaultPrinter: Printer = {
  columns: [nameCol(), col('Created At', AGE_DOC, { type: 'date' })],
  cells: (obj) => [obj.metadata.name, obj.metadata.creationTimestamp ?? ''],
};

export function printerFor(group: string, kind: string): Printer {
  return PRINTERS[`${group}/${kind}`] ?? defaultPrinter;
}
