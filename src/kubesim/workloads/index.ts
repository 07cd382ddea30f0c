import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from '../../log/logger.js';
import type { ResourceHandlers } from '../handlers.js';
import type { ResourceDef } from '../resources/registry.js';
import type { Store } from '../store.js';
import { DeploymentController } from './deployment-controller.js';
import { JobController } from './job-controller.js';
import { startNodeAgent, type NodeAgent } from './node-agent.js';
import { KUBESIM_NODE } from './pod-template.js';
import type { PodRunner } from './runner.js';

export type { PodContainer, PodRunContext, PodRunner, PodVolume } from './runner.js';
export { startNodeAgent, type NodeAgent, type NodeAgentOptions } from './node-agent.js';

/**
 * kubesim's opt-in process-backed workloads: a Deployment controller creating and rolling Pods
 * and (opt-in) a Job controller, both in-process as kube-controller-manager's stand-in, and the
 * process node agent (node-agent.ts, the same one the real-control-plane tier runs) running the
 * Pods bound to the node `kubesim` as child processes, talking to kubesim over HTTP. The
 * controllers start with kubesim; the agent once kubesim listens.
 */
export interface Workloads {
  /** Starts the node agent against the listening kubesim. */
  startNode(kubeConfig: KubeConfig): Promise<void>;
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
  let agent: NodeAgent | undefined;
  const jobs = deps.jobs
    ? new JobController(deps.store, deps.handlers, deps.jobs, deps.pods, deps.log)
    : undefined;
  const controller = new DeploymentController(
    deps.store,
    deps.handlers,
    deps.deployments,
    deps.pods,
    (uid) => agent?.readySinceMs(uid),
    deps.log,
  );
  controller.start();
  jobs?.start();
  return {
    async startNode(kubeConfig) {
      agent = await startNodeAgent({
        kubeConfig,
        runner: deps.runner,
        log: deps.log,
        nodeName: KUBESIM_NODE,
        ...(deps.serviceAccountToken ? { serviceAccountToken: deps.serviceAccountToken } : {}),
      });
    },
    async stop(graceMs) {
      controller.stop();
      jobs?.stop();
      await agent?.stop(graceMs);
    },
  };
}
