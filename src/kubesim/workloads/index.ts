import type { Logger } from '../../log/logger.js';
import type { ResourceHandlers } from '../handlers.js';
import type { ResourceDef } from '../resources/registry.js';
import type { Store } from '../store.js';
import { DeploymentController } from './deployment-controller.js';
import { JobController } from './job-controller.js';
import { Kubelet } from './kubelet.js';
import type { PodRunner } from './runner.js';

export type { PodContainer, PodRunContext, PodRunner, PodVolume } from './runner.js';

/**
 * kubesim's opt-in process-backed workloads: a kubelet running Pods as child processes, a
 * Deployment controller creating and rolling them, and (opt-in) a Job controller. Started only
 * when a PodRunner is given.
 */
export interface Workloads {
  /** Stops the controllers, then every pod process (SIGTERM, SIGKILL after `graceMs`). */
  stop(graceMs?: number): Promise<void>;
}

export function startWorkloads(deps: {
  store: Store;
  handlers: ResourceHandlers;
  deployments: ResourceDef;
  pods: ResourceDef;
  runner: PodRunner;
  log: Logger;
  /** Given: a Job controller runs the Jobs (Helm's hooks) too. */
  jobs?: ResourceDef;
  /** The token of a pod's ServiceAccount (for pods that mount one). */
  serviceAccountToken?: (namespace: string, name: string) => string;
}): Workloads {
  const kubelet = new Kubelet(
    deps.store,
    deps.handlers,
    deps.pods,
    deps.runner,
    deps.log,
    deps.serviceAccountToken,
  );
  const jobs = deps.jobs
    ? new JobController(deps.store, deps.handlers, deps.jobs, deps.pods, deps.log)
    : undefined;
  const controller = new DeploymentController(
    deps.store,
    deps.handlers,
    deps.deployments,
    deps.pods,
    kubelet,
    deps.log,
  );
  kubelet.start();
  controller.start();
  jobs?.start();
  return {
    async stop(graceMs) {
      controller.stop();
      jobs?.stop();
      await kubelet.stop(graceMs);
    },
  };
}
