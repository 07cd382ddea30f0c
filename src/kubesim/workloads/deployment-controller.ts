import type { Logger } from '../../log/logger.js';
import type { ResourceHandlers } from '../handlers.js';
import { resourceKey, statusView, type ResourceDef } from '../resources/registry.js';
import { ApiError } from '../status.js';
import type { Store } from '../store.js';
import { isRecord, type KubeObject } from '../types.js';
import { podReady, rfc3339 } from './pod-status.js';
import { deletePod, podNameSuffix, writeOwnerStatus } from './owned-pods.js';
import { OwnerController } from './owner-loop.js';
import { controllerUid, podFromTemplate, TEMPLATE_HASH_LABEL, templateHash } from './pod-template.js';
import { planRollout, resolveFenceposts, type IntOrPercent, type PlanPod } from './rollout.js';

/**
 * kubesim's Deployment controller: keeps each Deployment's Pods at spec.replicas for its current
 * template and rolls them when the template changes (RollingUpdate with maxSurge,
 * maxUnavailable and minReadySeconds, or Recreate), one step per sync as planRollout decides,
 * and writes the Deployment's status through `/status`. It acts on kubesim's store directly (as
 * kube-controller-manager acts on etcd through the API): its writes are not admitted, like
 * kubesim's other own writes. A deleted Deployment's pods are deleted (the garbage collector).
 */

type Rec = Record<string, unknown>;
const rec = (v: unknown): Rec => (isRecord(v) ? v : {});

export class DeploymentController extends OwnerController {
  private readonly deploymentsKey: string;
  private readonly podsKey: string;
  private readonly deploymentStatus: ResourceDef;

  constructor(
    private readonly store: Store,
    private readonly handlers: ResourceHandlers,
    private readonly deployments: ResourceDef,
    private readonly pods: ResourceDef,
    /** The node agent's own clock of readiness (ms), finer than the Ready condition's seconds. */
    private readonly readySinceMs: (uid: string) => number | undefined,
    private readonly log: Logger,
  ) {
    super({ store, handlers, owners: deployments, pods, log, kind: 'deployment' });
    this.deploymentsKey = resourceKey(deployments);
    this.podsKey = resourceKey(pods);
    this.deploymentStatus = statusView(deployments);
  }

  protected sync(key: string): void {
    if (this.loop.stopped) return;
    const d = this.store.get(this.deploymentsKey, key);
    if (!d) return;
    const namespace = d.metadata.namespace ?? '';
    const spec = rec(d['spec']);
    const replicas = typeof spec['replicas'] === 'number' ? spec['replicas'] : 1;
    const minReadyMs = (typeof spec['minReadySeconds'] === 'number' ? spec['minReadySeconds'] : 0) * 1000;
    const strategy = rec(spec['strategy']);
    const rolling = rec(strategy['rollingUpdate']);
    const fence = resolveFenceposts(
      (rolling['maxSurge'] ?? '25%') as IntOrPercent,
      (rolling['maxUnavailable'] ?? '25%') as IntOrPercent,
      replicas,
    );
    const hash = templateHash(spec['template']);
    const now = Date.now();
    let nextAvailableInMs: number | undefined;

    const owned = this.store.list(this.podsKey, namespace).filter((p) => controllerUid(p) === d.metadata.uid);
    const active = owned.filter((p) => !p.metadata.deletionTimestamp);
    const view = (p: KubeObject): PlanPod => {
      const ready = podReady(p['status']);
      const readySinceMs = ready ? this.readySince(p) : undefined;
      const available = ready && readySinceMs !== undefined && now - readySinceMs >= minReadyMs;
      if (ready && !available && readySinceMs !== undefined) {
        const left = readySinceMs + minReadyMs - now;
        nextAvailableInMs = Math.min(nextAvailableInMs ?? left, left);
      }
      return {
        name: p.metadata.name,
        ready,
        available,
        ...(readySinceMs !== undefined ? { readySinceMs } : {}),
        creationMs: Date.parse(p.metadata.creationTimestamp ?? '') || 0,
      };
    };
    const newPods = active.filter((p) => p.metadata.labels?.[TEMPLATE_HASH_LABEL] === hash).map(view);
    const oldPods = active.filter((p) => p.metadata.labels?.[TEMPLATE_HASH_LABEL] !== hash).map(view);

    if (spec['paused'] !== true) {
      const step = planRollout({
        replicas,
        strategy: strategy['type'] === 'Recreate' ? 'Recreate' : 'RollingUpdate',
        maxSurge: fence.maxSurge,
        maxUnavailable: fence.maxUnavailable,
        newPods,
        oldPods,
        terminating: owned.length - active.length,
      });
      for (let i = 0; i < step.create; i++) this.createPod(d, hash);
      for (const name of step.delete) deletePod(this.handlers, this.pods, namespace, name);
      if (step.create > 0 || step.delete.length > 0) {
        this.log.debug(
          { deployment: key, create: step.create, delete: step.delete },
          'kubesim deployment step',
        );
        // The writes above re-enqueue this Deployment; its status is written on that sync.
        return;
      }
    }
    if (nextAvailableInMs !== undefined) this.loop.syncAfter(key, Math.max(1, nextAvailableInMs + 5));
    this.writeStatus(d, replicas, fence.maxUnavailable, newPods, [...newPods, ...oldPods]);
  }

  private readySince(pod: KubeObject): number | undefined {
    const known = this.readySinceMs(pod.metadata.uid ?? '');
    if (known !== undefined) return known;
    const conditions = rec(pod['status'])['conditions'];
    const ready: unknown = Array.isArray(conditions)
      ? conditions.find((c) => isRecord(c) && c['type'] === 'Ready')
      : undefined;
    const since = rec(ready)['lastTransitionTime'];
    const t = typeof since === 'string' ? Date.parse(since) : NaN;
    return Number.isNaN(t) ? undefined : t;
  }

  private createPod(d: KubeObject, hash: string): void {
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        this.handlers.create(
          this.pods,
          d.metadata.namespace,
          { value: podFromTemplate(d, hash, podNameSuffix()), duplicates: [] },
          {},
        );
        return;
      } catch (err) {
        // A name collision draws another suffix; anything else is the template's own problem.
        if (err instanceof ApiError && err.code === 409) continue;
        throw err;
      }
    }
  }

  private writeStatus(
    d: KubeObject,
    replicas: number,
    maxUnavailable: number,
    updated: PlanPod[],
    all: PlanPod[],
  ): void {
    const available = all.filter((p) => p.available).length;
    const old = rec(d['status']);
    const now = rfc3339(Date.now());
    const prevConditions = Array.isArray(old['conditions']) ? old['conditions'] : [];
    const cond = (type: string, ok: boolean, reason: string, message: string): Rec => {
      const prev = rec(prevConditions.find((c) => isRecord(c) && c['type'] === type));
      const status = ok ? 'True' : 'False';
      const same = prev['status'] === status && prev['reason'] === reason;
      return {
        type,
        status,
        lastUpdateTime: same ? prev['lastUpdateTime'] : now,
        lastTransitionTime: prev['status'] === status ? prev['lastTransitionTime'] : now,
        reason,
        message,
      };
    };
    const complete = updated.length === replicas && all.length === replicas && available === replicas;
    const status: Rec = {
      observedGeneration: d.metadata.generation ?? 1,
      replicas: all.length,
      updatedReplicas: updated.length,
      readyReplicas: all.filter((p) => p.ready).length,
      availableReplicas: available,
      unavailableReplicas: Math.max(0, replicas - available),
      conditions: [
        available >= replicas - maxUnavailable
          ? cond('Available', true, 'MinimumReplicasAvailable', 'Deployment has minimum availability.')
          : cond(
              'Available',
              false,
              'MinimumReplicasUnavailable',
              'Deployment does not have minimum availability.',
            ),
        complete
          ? cond(
              'Progressing',
              true,
              'NewReplicaSetAvailable',
              `Deployment "${d.metadata.name}" has successfully progressed.`,
            )
          : cond('Progressing', true, 'ReplicaSetUpdated', `Deployment "${d.metadata.name}" is progressing.`),
      ],
    };
    for (const k of [
      'replicas',
      'updatedReplicas',
      'readyReplicas',
      'availableReplicas',
      'unavailableReplicas',
    ])
      if (status[k] === 0) delete status[k];
    writeOwnerStatus(this.handlers, this.deploymentStatus, d, status);
  }
}
