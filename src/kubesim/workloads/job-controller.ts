import type { Logger } from '../../log/logger.js';
import type { ResourceHandlers } from '../handlers.js';
import { resourceKey, statusView, type ResourceDef } from '../resources/registry.js';
import { ApiError } from '../status.js';
import { objectKey, type Store } from '../store.js';
import { isRecord, type KubeObject } from '../types.js';
import { rfc3339 } from './pod-status.js';
import { deletePod, podNameSuffix, writeOwnerStatus } from './owned-pods.js';
import { OwnerController } from './owner-loop.js';
import { controllerUid, KUBESIM_NODE } from './pod-template.js';
import { jobVerdict, type JobPodView } from './job-verdict.js';

/**
 * kubesim's Job controller (what kube-controller-manager's does for the Jobs a Helm chart's hooks
 * create): one Pod at a time from the Job's template (named `<job>-<5 chars>`, labelled
 * `batch.kubernetes.io/job-name` and `controller-uid`, owned by the Job), a new one after a
 * failed one until `backoffLimit` failures (the controller's 10 s doubling delay between them),
 * and the Job's status through `/status`: Complete once a pod succeeded, Failed with
 * BackoffLimitExceeded or DeadlineExceeded (activeDeadlineSeconds, its pods then deleted). A pod
 * whose ServiceAccount does not exist is not created (the API server's ServiceAccount admission
 * refuses it), retried. A deleted Job's pods are deleted (the garbage collector).
 */

type Rec = Record<string, unknown>;
const rec = (v: unknown): Rec => (isRecord(v) ? v : {});

/** The Job controller's pod failure backoff: 10 s, doubling, at most 6 min. */
export function retryDelayMs(failures: number): number {
  return Math.min(10_000 * 2 ** Math.max(0, failures - 1), 360_000);
}

export class JobController extends OwnerController {
  private readonly jobsKey: string;
  private readonly podsKey: string;
  private readonly jobStatus: ResourceDef;

  constructor(
    private readonly store: Store,
    private readonly handlers: ResourceHandlers,
    private readonly jobs: ResourceDef,
    private readonly pods: ResourceDef,
    private readonly log: Logger,
  ) {
    super({ store, handlers, owners: jobs, pods, log, kind: 'job' });
    this.jobsKey = resourceKey(jobs);
    this.podsKey = resourceKey(pods);
    this.jobStatus = statusView(jobs);
  }

  protected sync(key: string): void {
    if (this.loop.stopped) return;
    const job = this.store.get(this.jobsKey, key);
    if (!job) return;
    const namespace = job.metadata.namespace ?? '';
    const spec = rec(job['spec']);
    const status = rec(job['status']);
    const owned = this.store
      .list(this.podsKey, namespace)
      .filter((p) => controllerUid(p) === job.metadata.uid);
    const views: JobPodView[] = owned.map((p) => ({
      name: p.metadata.name,
      phase: phaseOf(p),
      terminating: Boolean(p.metadata.deletionTimestamp),
      finishedMs: finishedMs(p),
    }));
    const now = Date.now();
    const startMs = typeof status['startTime'] === 'string' ? Date.parse(status['startTime']) : now;
    const verdict = jobVerdict({
      finished: hasCondition(status, 'Complete') || hasCondition(status, 'Failed'),
      backoffLimit: typeof spec['backoffLimit'] === 'number' ? spec['backoffLimit'] : 6,
      ...(typeof spec['activeDeadlineSeconds'] === 'number'
        ? { deadlineMs: startMs + spec['activeDeadlineSeconds'] * 1000 }
        : {}),
      pods: views,
      nowMs: now,
      retryDelayMs,
    });
    if (verdict.kind === 'done') return;
    if (verdict.kind === 'complete' || verdict.kind === 'failed') {
      for (const name of verdict.kind === 'failed' ? verdict.deletePods : [])
        deletePod(this.handlers, this.pods, namespace, name);
      this.writeStatus(job, views, startMs, verdict);
      return;
    }
    if (status['startTime'] === undefined) this.writeStatus(job, views, now, verdict);
    if (verdict.kind === 'create' && !this.createPod(job)) {
      this.loop.syncAfter(key, Math.min(2000, verdict.deadlineInMs ?? 2000));
      return;
    }
    // One timer per Job: the earlier of the retry and the deadline (a pod event syncs sooner).
    const next = Math.min(
      verdict.kind === 'wait' ? (verdict.retryInMs ?? Infinity) : Infinity,
      verdict.deadlineInMs ?? Infinity,
    );
    if (next !== Infinity) this.loop.syncAfter(key, Math.max(1, next));
  }

  /** Creates the next pod; false when it cannot be created yet (its ServiceAccount is missing). */
  private createPod(job: KubeObject): boolean {
    const namespace = job.metadata.namespace ?? '';
    const template = rec(rec(job['spec'])['template']);
    const podSpec = rec(template['spec']);
    const account =
      typeof podSpec['serviceAccountName'] === 'string' ? podSpec['serviceAccountName'] : 'default';
    // kubesim has no ServiceAccount controller: "default" counts as present in every namespace.
    if (account !== 'default' && !this.store.get('/serviceaccounts', `${namespace}/${account}`)) {
      this.log.info(
        { job: objectKey(job), serviceAccount: account },
        'kubesim job pod not created: its ServiceAccount does not exist (retried)',
      );
      return false;
    }
    const meta = rec(template['metadata']);
    const uid = job.metadata.uid ?? '';
    const labels = {
      ...(rec(meta['labels']) as Record<string, string>),
      'batch.kubernetes.io/job-name': job.metadata.name,
      'job-name': job.metadata.name,
      'batch.kubernetes.io/controller-uid': uid,
      'controller-uid': uid,
    };
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        this.handlers.create(
          this.pods,
          namespace,
          {
            value: {
              apiVersion: 'v1',
              kind: 'Pod',
              metadata: {
                name: `${job.metadata.name}-${podNameSuffix()}`,
                namespace,
                labels,
                ...(isRecord(meta['annotations']) ? { annotations: meta['annotations'] } : {}),
                ownerReferences: [
                  {
                    apiVersion: 'batch/v1',
                    kind: 'Job',
                    name: job.metadata.name,
                    uid,
                    controller: true,
                    blockOwnerDeletion: true,
                  },
                ],
              },
              spec: { ...structuredClone(podSpec), nodeName: KUBESIM_NODE },
            },
            duplicates: [],
          },
          {},
        );
        return true;
      } catch (err) {
        if (!(err instanceof ApiError) || err.status.code !== 409) throw err;
      }
    }
    return false;
  }

  private writeStatus(
    job: KubeObject,
    pods: readonly JobPodView[],
    startMs: number,
    verdict: ReturnType<typeof jobVerdict>,
  ): void {
    const now = rfc3339(Date.now());
    const condition = (type: string, reason?: string, message?: string) => ({
      type,
      status: 'True',
      lastProbeTime: now,
      lastTransitionTime: now,
      ...(reason ? { reason } : {}),
      ...(message ? { message } : {}),
    });
    const succeeded = pods.filter((p) => p.phase === 'Succeeded').length;
    const failed = pods.filter((p) => p.phase === 'Failed').length;
    const active = pods.filter(
      (p) => !p.terminating && p.phase !== 'Succeeded' && p.phase !== 'Failed',
    ).length;
    const status: Rec = {
      startTime: rfc3339(startMs),
      ...(active ? { active } : {}),
      ...(succeeded ? { succeeded } : {}),
      ...(failed ? { failed } : {}),
    };
    if (verdict.kind === 'complete')
      Object.assign(status, {
        completionTime: now,
        conditions: [condition('SuccessCriteriaMet'), condition('Complete')],
      });
    if (verdict.kind === 'failed')
      status['conditions'] = [
        condition('FailureTarget', verdict.reason, verdict.message),
        condition('Failed', verdict.reason, verdict.message),
      ];
    writeOwnerStatus(this.handlers, this.jobStatus, job, status);
  }
}

function phaseOf(pod: KubeObject): string {
  const phase = rec(pod['status'])['phase'];
  return typeof phase === 'string' ? phase : 'Pending';
}

function hasCondition(status: Rec, type: string): boolean {
  const conditions = status['conditions'];
  return (
    Array.isArray(conditions) &&
    conditions.some((c) => isRecord(c) && c['type'] === type && c['status'] === 'True')
  );
}

/** When the pod's container finished (ms), for the retry delay. */
function finishedMs(pod: KubeObject): number | undefined {
  const statuses = rec(pod['status'])['containerStatuses'];
  const first = Array.isArray(statuses) ? rec(statuses[0]) : {};
  const at = rec(rec(first['state'])['terminated'])['finishedAt'];
  const t = typeof at === 'string' ? Date.parse(at) : NaN;
  return Number.isNaN(t) ? undefined : t;
}
