import { spawn } from 'node:child_process';
import { BatchV1Api, CoreV1Api, type V1Job } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { startKubesim, type Kubesim, type PodRunner } from '../../src/kubesim/index.js';
import { podText } from '../../src/kubesim/workloads/cli-pod-runner.js';
import { pollUntil } from '../helpers/wait.js';
import { budget } from '../helpers/budget.js';

/**
 * kubesim's Job controller (`runJobs`, what `endpoint-binder kubesim --workloads` turns on): a
 * Job's pod runs as a process; exit 0 makes the Job Complete, a failure beyond backoffLimit makes
 * it Failed (BackoffLimitExceeded) with the container's output as its termination message
 * (FallbackToLogsOnError); a Secret the env needs that does not exist holds the pod in
 * CreateContainerConfigError naming it, as a node's kubelet does.
 */

/** Each pod runs `node -e <SCRIPT env>`: prints MESSAGE, exits with EXIT_CODE. */
const runner: PodRunner = (ctx) =>
  spawn(
    process.execPath,
    ['-e', 'console.error(process.env.MESSAGE); process.exit(Number(process.env.EXIT_CODE))'],
    {
      env: ctx.container.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );

let sim: Kubesim | undefined;
afterEach(async () => {
  await sim?.stop();
  sim = undefined;
});

function job(name: string, env: unknown[], backoffLimit = 0): V1Job {
  return {
    metadata: { name },
    spec: {
      backoffLimit,
      template: {
        spec: {
          restartPolicy: 'Never',
          containers: [
            { name: 'c', image: 'x', terminationMessagePolicy: 'FallbackToLogsOnError', env: env as never },
          ],
        },
      },
    },
  };
}

async function until<T>(what: string, read: () => Promise<T | undefined>, ms = 30_000): Promise<T> {
  return (await pollUntil(what, read, (v) => v !== undefined, { timeoutMs: ms, intervalMs: 100 })) as T;
}

/** kubesim running Jobs with the test's pod runner, and the clients the tests use. */
async function startJobs(): Promise<{ batch: BatchV1Api; core: CoreV1Api }> {
  sim = await startKubesim({ podRunner: runner, runJobs: true });
  return {
    batch: sim.kubeConfig().makeApiClient(BatchV1Api),
    core: sim.kubeConfig().makeApiClient(CoreV1Api),
  };
}

describe('kubesim Job controller', () => {
  it(
    'a pod that exits 0 completes the Job; one that fails beyond backoffLimit fails it with its output',
    { timeout: budget(60_000) },
    async () => {
      const { batch, core } = await startJobs();
      await batch.createNamespacedJob({
        namespace: 'default',
        body: job('ok', [
          { name: 'EXIT_CODE', value: '0' },
          { name: 'MESSAGE', value: 'fine' },
        ]),
      });
      await batch.createNamespacedJob({
        namespace: 'default',
        body: job('bad', [
          { name: 'EXIT_CODE', value: '3' },
          { name: 'MESSAGE', value: 'selector: syntax error' },
        ]),
      });
      const conditionOf = (name: string) => async () => {
        const j = await batch.readNamespacedJobStatus({ namespace: 'default', name });
        const c = j.status?.conditions?.find((x) => x.type === 'Complete' || x.type === 'Failed');
        return c ? `${c.type}/${c.reason ?? ''}` : undefined;
      };
      expect(await until('ok to finish', conditionOf('ok'))).toBe('Complete/');
      expect(await until('bad to finish', conditionOf('bad'))).toBe('Failed/BackoffLimitExceeded');
      const pods = await core.listNamespacedPod({ namespace: 'default', labelSelector: 'job-name=bad' });
      expect(pods.items).toHaveLength(1);
      const terminated = pods.items[0]?.status?.containerStatuses?.[0]?.state?.terminated;
      expect(terminated?.exitCode).toBe(3);
      expect(terminated?.message).toBe('selector: syntax error');
    },
  );

  it(
    'a Secret the env needs that does not exist holds the pod in CreateContainerConfigError',
    { timeout: budget(60_000) },
    async () => {
      const { batch, core } = await startJobs();
      await batch.createNamespacedJob({
        namespace: 'default',
        body: job('needs-secret', [
          { name: 'EXIT_CODE', valueFrom: { secretKeyRef: { name: 'creds', key: 'API_KEY' } } },
        ]),
      });
      const waiting = await until('the pod to wait', async () => {
        const pods = await core.listNamespacedPod({
          namespace: 'default',
          labelSelector: 'job-name=needs-secret',
        });
        const w = pods.items[0]?.status?.containerStatuses?.[0]?.state?.waiting;
        return w?.reason === 'CreateContainerConfigError' ? w : undefined;
      });
      expect(waiting.message).toBe('secret "creds" not found');
    },
  );
});

describe("podText (paths into a pod's mounts, listeners on its IP)", () => {
  it('rewrites each mount once, leaves look-alike paths, and moves 0.0.0.0 to the pod IP', () => {
    const mounts = [
      { mountPath: '/etc/endpoint-binder', target: '/tmp/p/volumes/config' },
      { mountPath: '/tmp', target: '/tmp/p/volumes/tmp' },
    ];
    expect(
      podText(
        '--config /etc/endpoint-binder/c.yaml /tmp/x /tmpfoo /var/tmp/y listen: 0.0.0.0:8080',
        mounts,
        '127.0.3.4',
      ),
    ).toBe(
      '--config /tmp/p/volumes/config/c.yaml /tmp/p/volumes/tmp/x /tmpfoo /var/tmp/y listen: 127.0.3.4:8080',
    );
  });
});
