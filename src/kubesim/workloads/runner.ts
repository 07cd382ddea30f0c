import type { ChildProcess } from 'node:child_process';
import type { KubeObject } from '../types.js';

/**
 * The seam between the node agent (node-agent.ts) and a real process: a caller-supplied function that starts
 * one Pod's container as a child process. The agent owns the lifecycle from then on (probes,
 * SIGTERM, SIGKILL after the grace period, removal when it has exited), so the runner must return
 * the process that does the work itself, not a wrapper shell that would outlive a SIGKILL.
 */

export interface PodContainer {
  name: string;
  command?: string[];
  args?: string[];
  /** The container's env, resolved (value, fieldRef, configMapKeyRef, secretKeyRef). */
  env: Record<string, string>;
  ports: { name?: string; containerPort: number }[];
}

/** One volume mounted into the container, with its files as the kubelet would write them. */
export interface PodVolume {
  name: string;
  mountPath: string;
  /** File name (relative to the mount) → content: a ConfigMap's or Secret's keys (or items); empty for emptyDir. */
  files: Record<string, Buffer>;
}

export interface PodRunContext {
  namespace: string;
  name: string;
  uid: string;
  /** The loopback address the node agent gave the pod (in 127.1.1.1-127.254.254.254): listen there. */
  podIP: string;
  /** The first container of the pod's spec (kubesim runs one container per pod). */
  container: PodContainer;
  /** The Pod as stored when it was started (volumes, annotations, ... for the runner to map). */
  pod: KubeObject;
  /** The container's volumeMounts of configMap, secret and emptyDir volumes, resolved. */
  volumes: PodVolume[];
  /** The pod's ServiceAccount token, unless automountServiceAccountToken is false. */
  serviceAccountToken?: string;
}

/**
 * Starts the container. When the returned process's stdout and stderr are pipes, the agent
 * keeps their tail as the container runtime's log (a failed container's termination message with
 * `terminationMessagePolicy: FallbackToLogsOnError`) and outputs().
 */
export type PodRunner = (ctx: PodRunContext) => ChildProcess | Promise<ChildProcess>;
