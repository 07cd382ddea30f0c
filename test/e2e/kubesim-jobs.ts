import { BatchV1Api, type V1Job } from '@kubernetes/client-node';
import type { Kubesim } from '../../src/kubesim/index.js';
import { podName, podTemplateSchema, runPod, templateHash, type PodProcess } from './kubesim-pods.js';

/**
 * Plays the Job controller and the kubelet for Helm hook Jobs in kubesim: while `done()` is
 * false, every Job of `namespace` whose `helm.sh/hook` names one of `phase` and that has no condition
 * yet runs once as a local process (kubesim-pods.ts), and its status is then written through
 * `jobs/status` as the Job controller would: Complete on exit 0, Failed otherwise. Helm, which
 * waits for hook Jobs, then proceeds or fails.
 */
export interface HookRun {
  job: string;
  code: number | null;
  output: string;
}

export async function playHookJobs(opts: {
  sim: Kubesim;
  namespace: string;
  /** One hook phase or several (an upgrade has pre-upgrade and post-upgrade hooks). */
  phase: string | readonly string[];
  workDir: string;
  loopbackArgs: (component: string) => string[];
  done: () => boolean;
  /** Called when the Job is seen, before its pod starts (the hook's resources exist by then). */
  beforeRun?: (job: V1Job) => Promise<void>;
  /** Called after the pod exited, before the Job's status is written. */
  beforeStatus?: (pod: PodProcess) => Promise<void>;
  onRun?: (run: HookRun) => void;
}): Promise<HookRun[]> {
  const batch = opts.sim.kubeConfig().makeApiClient(BatchV1Api);
  const played = new Set<string>();
  const phases: readonly string[] = typeof opts.phase === 'string' ? [opts.phase] : opts.phase;
  const runs: HookRun[] = [];
  // Bounded: helm itself gives up after its timeout; this loop ends when helm has returned.
  for (let i = 0; i < 4 * 60 * 10 && !opts.done(); i++) {
    const jobs = await batch.listNamespacedJob({ namespace: opts.namespace }).catch(() => ({ items: [] }));
    const job = jobs.items.find(
      (j) =>
        (j.metadata?.annotations?.['helm.sh/hook'] ?? '').split(',').some((p) => phases.includes(p)) &&
        !j.status?.conditions?.length &&
        !played.has(j.metadata?.uid ?? ''),
    );
    if (!job) {
      await new Promise((r) => setTimeout(r, 250));
      continue;
    }
    played.add(job.metadata?.uid ?? '');
    const run = await playOne(opts, batch, job);
    runs.push(run);
    opts.onRun?.(run);
  }
  return runs;
}

async function playOne(
  opts: Parameters<typeof playHookJobs>[0],
  batch: BatchV1Api,
  job: V1Job,
): Promise<HookRun> {
  const name = job.metadata?.name ?? '';
  await opts.beforeRun?.(job);
  const started = new Date();
  const pod = await runPod(opts.sim, {
    namespace: opts.namespace,
    name: podName(name, templateHash(job.spec?.template)),
    template: podTemplateSchema.parse(job.spec?.template),
    workDir: opts.workDir,
    loopbackArgs: opts.loopbackArgs,
  });
  const code = await pod.exited;
  await opts.beforeStatus?.(pod);
  const finished = new Date();
  const condition = (type: string, reason?: string) => ({
    type,
    status: 'True',
    lastProbeTime: finished,
    lastTransitionTime: finished,
    ...(reason ? { reason, message: 'Job has reached the specified backoff limit' } : {}),
  });
  const status: V1Job['status'] =
    code === 0
      ? {
          conditions: [condition('SuccessCriteriaMet'), condition('Complete')],
          succeeded: 1,
          startTime: started,
          completionTime: finished,
        }
      : {
          conditions: [
            condition('FailureTarget', 'BackoffLimitExceeded'),
            condition('Failed', 'BackoffLimitExceeded'),
          ],
          failed: 1,
          startTime: started,
        };
  await batch.replaceNamespacedJobStatus({ namespace: opts.namespace, name, body: { ...job, status } });
  return { job: name, code, output: pod.output() };
}
