import type { KubeConfig } from '@kubernetes/client-node';
import {
  EventRecorder,
  KubeClient,
  KubeTransport,
  type CacheTuning,
  type InvolvedObject,
} from '../../kube/index.js';
import { ClusterState } from '../cluster.js';
import type { ControllerBase } from './base.js';

/** Normal Events: a burst of 50, then 10 a second (Warnings are never limited). */
const NORMAL_EVENT_LIMIT = { burst: 50, perSecond: 10 };

/** The start options the Kubernetes side reads (`ControllerOptions` has them). */
export interface KubeSideSettings {
  kubeConfig: KubeConfig;
  /** The controller's Pod (downward API), for events about endpoints without a Service. */
  pod?: { name: string; namespace: string };
  cacheTuning?: Partial<CacheTuning>;
  pendingWriteTtlMs?: number;
}

/** The controller's side of the Kubernetes API: one transport for the client, the Events and the caches. */
export interface KubeSide {
  transport: KubeTransport;
  kube: KubeClient;
  recorder: EventRecorder;
  /** The controller's Pod as an Event's object, when known. */
  podRef: InvolvedObject | undefined;
  /** The read model: this install's Services, the Namespaces, the writes not shown yet. Every event asks for a pass. */
  cluster: ClusterState;
}

export function kubeSide(base: ControllerBase, settings: KubeSideSettings): KubeSide {
  const { log, registry, queue } = base;
  const { pod } = settings;
  const transport = new KubeTransport(settings.kubeConfig);
  const recorder = new EventRecorder({
    transport,
    logger: log.child({ component: 'events' }),
    metrics: registry,
    normalRateLimit: NORMAL_EVENT_LIMIT,
    ...(pod ? { instance: pod.name } : {}),
  });
  const cluster = new ClusterState({
    transport,
    identity: base.identity,
    log: log.child({ component: 'cache' }),
    metrics: registry,
    onChange: () => queue.requestPass(),
    ...(settings.cacheTuning ? { tuning: settings.cacheTuning } : {}),
    ...(settings.pendingWriteTtlMs !== undefined ? { pendingTtlMs: settings.pendingWriteTtlMs } : {}),
  });
  return {
    transport,
    kube: new KubeClient(transport),
    recorder,
    podRef: pod ? { kind: 'Pod', apiVersion: 'v1', name: pod.name, namespace: pod.namespace } : undefined,
    cluster,
  };
}
