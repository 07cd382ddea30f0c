import { ROLE_ALIAS, ROLE_INTERNAL, ROLE_LABEL } from '../binding/identity.js';
import type { EndpointStatus, PlanAction, ProjectionState } from '../binding/types.js';
import { PROJECTION_STATES } from '../binding/types.js';
import type { Service } from '../kube/index.js';
import type { ApplyOutcome } from './apply.js';
import type { ControllerMetrics } from './metrics.js';

/**
 * The gauges a pass leaves: endpoints by state, and per role the Services wanted and the ones
 * that match the cluster (wanted minus the actions this pass did not complete).
 */
export function recordPassMetrics(
  m: ControllerMetrics,
  statuses: readonly EndpointStatus[],
  desired: ReadonlyMap<string, Service>,
  actions: readonly PlanAction[],
  outcomes: readonly ApplyOutcome[],
): void {
  const counts = new Map<ProjectionState, number>(PROJECTION_STATES.map((s) => [s, 0]));
  for (const s of statuses) counts.set(s.state, (counts.get(s.state) ?? 0) + 1);
  for (const [state, n] of counts) m.endpoints.set({ state }, n);
  const outstanding = new Set(actions.map((a) => a.key));
  for (const o of outcomes)
    if (o.result === 'created' || o.result === 'updated' || o.result === 'deleted') outstanding.delete(o.key);
  const want = new Map<string, number>([
    [ROLE_INTERNAL, 0],
    [ROLE_ALIAS, 0],
  ]);
  const applied = new Map(want);
  for (const [key, svc] of desired) {
    const role = svc.metadata.labels?.[ROLE_LABEL];
    const n = role === undefined ? undefined : want.get(role);
    if (n === undefined) continue;
    want.set(role!, n + 1);
    if (!outstanding.has(key)) applied.set(role!, applied.get(role!)! + 1);
  }
  for (const [role, n] of want) {
    m.servicesDesired.set({ role }, n);
    m.servicesApplied.set({ role }, applied.get(role)!);
  }
}
