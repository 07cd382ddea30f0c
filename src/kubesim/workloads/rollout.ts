/**
 * The Deployment controller's decisions for one sync, as pure functions: resolving maxSurge and
 * maxUnavailable (ints or percents) against the replica count, and what one RollingUpdate step
 * does (pkg/controller/deployment/rolling.go, with each ReplicaSet's pods standing in for its
 * spec.replicas since kubesim keeps no ReplicaSet objects). One step either creates or deletes,
 * as rolloutRolling returns after a scale-up; the next store event runs the next step.
 */

export type IntOrPercent = number | string;

/** A pod of the Deployment that is not terminating (the ReplicaSet's active pods). */
export interface PlanPod {
  name: string;
  /** Ready condition True. */
  ready: boolean;
  /** Ready for at least minReadySeconds. */
  available: boolean;
  /** When it became ready (ms), for the scale-down order; undefined while not ready. */
  readySinceMs?: number;
  creationMs: number;
}

export interface PlanInput {
  replicas: number;
  strategy: 'RollingUpdate' | 'Recreate';
  maxSurge: number;
  maxUnavailable: number;
  /** Pods of the current template (pod-template-hash of the Deployment's template). */
  newPods: PlanPod[];
  /** Pods of older templates. */
  oldPods: PlanPod[];
  /** Pods already terminating (Recreate waits for them before it creates). */
  terminating: number;
}

export interface PlanStep {
  create: number;
  delete: string[];
}

/**
 * intstr.GetScaledValueFromIntOrPercent: a percent of `total`, rounded up (maxSurge) or down
 * (maxUnavailable). Undefined for a string that is not `<int>%`.
 */
export function scaledValue(value: IntOrPercent, total: number, roundUp: boolean): number | undefined {
  if (typeof value === 'number') return Number.isInteger(value) ? value : undefined;
  const m = /^(\d+)%$/.exec(value);
  if (!m) return undefined;
  const exact = (Number(m[1]) * total) / 100;
  return roundUp ? Math.ceil(exact) : Math.floor(exact);
}

/**
 * deploymentutil.ResolveFenceposts: surge rounds up, unavailable down, and both zero becomes
 * maxUnavailable 1 so a rollout can always make progress.
 */
export function resolveFenceposts(
  maxSurge: IntOrPercent,
  maxUnavailable: IntOrPercent,
  replicas: number,
): { maxSurge: number; maxUnavailable: number } {
  const surge = scaledValue(maxSurge, replicas, true) ?? 0;
  const unavailable = scaledValue(maxUnavailable, replicas, false) ?? 0;
  if (surge === 0 && unavailable === 0) return { maxSurge: 0, maxUnavailable: 1 };
  return { maxSurge: surge, maxUnavailable: unavailable };
}

/**
 * The order a ReplicaSet deletes pods in when it scales down (controller.ActivePods, simplified
 * to what kubesim has): not ready before ready, then ready for the shortest time, then newest.
 */
export function scaleDownOrder(pods: readonly PlanPod[]): PlanPod[] {
  return [...pods].sort((a, b) => {
    if (a.ready !== b.ready) return a.ready ? 1 : -1;
    const ra = a.readySinceMs ?? 0;
    const rb = b.readySinceMs ?? 0;
    if (ra !== rb) return rb - ra;
    return b.creationMs - a.creationMs;
  });
}

const names = (pods: readonly PlanPod[], n: number): string[] =>
  scaleDownOrder(pods)
    .slice(0, Math.max(0, n))
    .map((p) => p.name);

/** One sync's step for a Deployment. */
export function planRollout(input: PlanInput): PlanStep {
  const { replicas, newPods, oldPods } = input;
  if (input.strategy === 'Recreate') {
    // rolloutRecreate: old pods all go first, and new ones start once none is left running.
    if (oldPods.length > 0) return { create: 0, delete: oldPods.map((p) => p.name) };
    if (input.terminating > 0) return { create: 0, delete: [] };
    return scaleTo(newPods, replicas);
  }
  // No old pods: a plain scale of the current template (sync, not rollout).
  if (oldPods.length === 0) return scaleTo(newPods, replicas);

  const { maxSurge, maxUnavailable } = input;
  // reconcileNewReplicaSet.
  if (newPods.length > replicas) return { create: 0, delete: names(newPods, newPods.length - replicas) };
  if (newPods.length < replicas) {
    const total = newPods.length + oldPods.length;
    const scaleUp = Math.min(replicas + maxSurge - total, replicas - newPods.length);
    if (scaleUp > 0) return { create: scaleUp, delete: [] };
  }

  // reconcileOldReplicaSets.
  const all = newPods.length + oldPods.length;
  const minAvailable = replicas - maxUnavailable;
  const newUnavailable = newPods.filter((p) => !p.available).length;
  const maxScaledDown = all - minAvailable - newUnavailable;
  if (maxScaledDown <= 0) return { create: 0, delete: [] };
  // cleanupUnhealthyReplicas: old pods that are not available go first, within maxScaledDown.
  const unhealthy = oldPods.filter((p) => !p.available);
  const cleanup = names(unhealthy, Math.min(maxScaledDown, unhealthy.length));
  // scaleDownOldReplicaSetsForRollingUpdate: then available old pods, keeping minAvailable.
  const available = newPods.filter((p) => p.available).length + oldPods.filter((p) => p.available).length;
  const scaleDown = Math.max(0, available - minAvailable);
  const healthy = oldPods.filter((p) => p.available);
  const more = names(healthy, Math.min(scaleDown, healthy.length));
  return { create: 0, delete: [...cleanup, ...more] };
}

function scaleTo(pods: readonly PlanPod[], replicas: number): PlanStep {
  if (pods.length < replicas) return { create: replicas - pods.length, delete: [] };
  return { create: 0, delete: names(pods, pods.length - replicas) };
}
