import { z } from 'zod';
import type { KubeObject } from '../types.js';
import { ageCol, col, formatLabelSelector, nameCol, optNum, optStr, view, type Printer } from './columns.js';
import { humanDuration, since } from './duration.js';

/** The Deployment and Job printers (printDeployment, printJob), which `kubectl get all` shows. */

const containers = z
  .array(z.looseObject({ name: optStr, image: optStr }))
  .optional()
  .catch(undefined);
const podTemplate = z
  .looseObject({ spec: z.looseObject({ containers }).optional().catch(undefined) })
  .optional()
  .catch(undefined);
const selector = z.unknown().optional();

/** layoutContainerCells: container names and images, comma-separated. */
function containerCells(template: z.infer<typeof podTemplate>): [string, string] {
  const list = template?.spec?.containers ?? [];
  return [list.map((c) => c.name ?? '').join(','), list.map((c) => c.image ?? '').join(',')];
}

const CONTAINERS_DOC = 'Names of each container in the template.';
const IMAGES_DOC = 'Images referenced by each container in the template.';

const deploymentView = z.looseObject({
  spec: z.looseObject({ replicas: optNum, selector, template: podTemplate }).optional().catch(undefined),
  status: z
    .looseObject({ updatedReplicas: optNum, readyReplicas: optNum, availableReplicas: optNum })
    .optional()
    .catch(undefined),
});

const deploymentPrinter: Printer = {
  columns: [
    nameCol(),
    col('Ready', 'Number of the pod with ready state'),
    col(
      'Up-to-date',
      'Total number of non-terminated pods targeted by this deployment that have the desired template spec.',
    ),
    col(
      'Available',
      'Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.',
    ),
    ageCol(),
    col('Containers', CONTAINERS_DOC, { priority: 1 }),
    col('Images', IMAGES_DOC, { priority: 1 }),
    col(
      'Selector',
      'Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the ones affected by this deployment.',
      { priority: 1 },
    ),
  ],
  cells(obj: KubeObject, now: number) {
    const d = view(deploymentView, obj);
    const [names, images] = containerCells(d?.spec?.template);
    return [
      obj.metadata.name,
      `${d?.status?.readyReplicas ?? 0}/${d?.spec?.replicas ?? 0}`,
      d?.status?.updatedReplicas ?? 0,
      d?.status?.availableReplicas ?? 0,
      since(obj.metadata.creationTimestamp, now),
      names,
      images,
      formatLabelSelector(d?.spec?.selector, ''),
    ];
  },
};

const jobView = z.looseObject({
  spec: z
    .looseObject({ completions: optNum, parallelism: optNum, selector, template: podTemplate })
    .optional()
    .catch(undefined),
  status: z
    .looseObject({
      succeeded: optNum,
      startTime: optStr,
      completionTime: optStr,
      conditions: z
        .array(z.looseObject({ type: optStr, status: optStr }))
        .optional()
        .catch(undefined),
    })
    .optional()
    .catch(undefined),
});

function jobStatus(obj: KubeObject, job: z.infer<typeof jobView> | undefined): string {
  const has = (type: string) =>
    (job?.status?.conditions ?? []).some((c) => c.type === type && c.status === 'True');
  if (has('Complete')) return 'Complete';
  if (has('Failed')) return 'Failed';
  if (obj.metadata.deletionTimestamp) return 'Terminating';
  if (has('Suspended')) return 'Suspended';
  if (has('FailureTarget')) return 'FailureTarget';
  return 'Running';
}

function jobCompletions(job: z.infer<typeof jobView> | undefined): string {
  const succeeded = job?.status?.succeeded ?? 0;
  if (job?.spec?.completions !== undefined) return `${succeeded}/${job.spec.completions}`;
  const parallelism = job?.spec?.parallelism ?? 0;
  return parallelism > 1 ? `${succeeded}/1 of ${parallelism}` : `${succeeded}/1`;
}

function jobDuration(job: z.infer<typeof jobView> | undefined, now: number): string {
  const start = Date.parse(job?.status?.startTime ?? '');
  if (Number.isNaN(start)) return '';
  const end = Date.parse(job?.status?.completionTime ?? '');
  return humanDuration((Number.isNaN(end) ? now : end) - start);
}

const jobPrinter: Printer = {
  columns: [
    nameCol(),
    col('Status', 'Status of the job.'),
    col('Completions', 'The number of pods which reached phase Succeeded.'),
    col('Duration', 'Time required to complete the job.'),
    ageCol(),
    col('Containers', CONTAINERS_DOC, { priority: 1 }),
    col('Images', IMAGES_DOC, { priority: 1 }),
    col('Selector', 'A label query over pods that should match the pod count.', { priority: 1 }),
  ],
  cells(obj: KubeObject, now: number) {
    const job = view(jobView, obj);
    const [names, images] = containerCells(job?.spec?.template);
    return [
      obj.metadata.name,
      jobStatus(obj, job),
      jobCompletions(job),
      jobDuration(job, now),
      since(obj.metadata.creationTimestamp, now),
      names,
      images,
      formatLabelSelector(job?.spec?.selector, '<none>'),
    ];
  },
};

export const WORKLOAD_PRINTERS: Record<string, Printer> = {
  'apps/Deployment': deploymentPrinter,
  'batch/Job': jobPrinter,
};
