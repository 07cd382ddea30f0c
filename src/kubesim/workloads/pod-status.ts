import { isRecord } from '../types.js';

/**
 * The Pod status the kubelet reports for a process-backed pod, built from what it observed:
 * the phase, the pod IP, the container's state and readiness, and the conditions (PodScheduled,
 * Initialized, ContainersReady, Ready) with a lastTransitionTime kept from the previous status
 * while a condition's value does not change.
 */

export type ContainerState =
  | { running: { startedAt: string } }
  | { waiting: { reason: string; message?: string } }
  | {
      terminated: {
        exitCode: number;
        signal?: number;
        reason: string;
        startedAt?: string;
        finishedAt: string;
        message?: string;
      };
    };

export interface ObservedPod {
  phase: 'Pending' | 'Running' | 'Succeeded' | 'Failed';
  podIP?: string;
  startTime: string;
  containerName: string;
  image?: string;
  ready: boolean;
  /** Why the pod is not ready though running (a probe that cannot run), for the Ready condition. */
  notReadyMessage?: string;
  restartCount: number;
  state: ContainerState;
  pid?: number;
}

/** RFC 3339 with seconds, as metav1.Time serializes. */
export function rfc3339(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');
}

function condition(
  type: string,
  value: boolean,
  previous: unknown,
  now: string,
  reason?: string,
  message?: string,
): Record<string, unknown> {
  const prev = Array.isArray(previous)
    ? previous.find((c): c is Record<string, unknown> => isRecord(c) && c['type'] === type)
    : undefined;
  const status = value ? 'True' : 'False';
  const since =
    prev && prev['status'] === status && typeof prev['lastTransitionTime'] === 'string'
      ? prev['lastTransitionTime']
      : now;
  return {
    type,
    status,
    lastTransitionTime: since,
    ...(!value && reason ? { reason } : {}),
    ...(!value && message ? { message } : {}),
  };
}

export function podStatus(o: ObservedPod, previous: unknown, nowMs: number): Record<string, unknown> {
  const now = rfc3339(nowMs);
  const prevConditions = isRecord(previous) ? previous['conditions'] : undefined;
  const notReady = o.ready ? undefined : 'ContainersNotReady';
  const message = o.ready
    ? undefined
    : (o.notReadyMessage ?? `containers with unready status: [${o.containerName}]`);
  return {
    phase: o.phase,
    conditions: [
      condition('PodReadyToStartContainers', true, prevConditions, now),
      condition('Initialized', true, prevConditions, now),
      condition('Ready', o.ready, prevConditions, now, notReady, message),
      condition('ContainersReady', o.ready, prevConditions, now, notReady, message),
      condition('PodScheduled', true, prevConditions, now),
    ],
    hostIP: '127.0.0.1',
    hostIPs: [{ ip: '127.0.0.1' }],
    ...(o.podIP ? { podIP: o.podIP, podIPs: [{ ip: o.podIP }] } : {}),
    startTime: o.startTime,
    containerStatuses: [
      {
        name: o.containerName,
        state: o.state,
        ready: o.ready,
        restartCount: o.restartCount,
        image: o.image ?? '',
        imageID: '',
        ...(o.pid !== undefined ? { containerID: `kubesim://${o.pid}` } : {}),
        started: 'running' in o.state,
      },
    ],
    qosClass: 'BestEffort',
  };
}

/** The Ready condition of a stored pod. */
export function podReady(status: unknown): boolean {
  if (!isRecord(status) || !Array.isArray(status['conditions'])) return false;
  return status['conditions'].some((c) => isRecord(c) && c['type'] === 'Ready' && c['status'] === 'True');
}
