import { deletingReason, isDeleting, needsUpdate } from '../binding/plan.js';
import type { EndpointStatus, ServiceRef } from '../binding/types.js';
import type { Service } from '../kube/objects.js';

/**
 * What `/status` and `/readyz` say about an endpoint is what the cluster holds, as this replica's
 * watch caches see it, never what was planned or written: a planned `projected` stays `pending`
 * (with what is missing) until both its Services are in the cache as desired. Pure.
 */

export type ObservedState = EndpointStatus['state'] | 'pending' | 'deleting';

export interface ObservedStatus extends Omit<EndpointStatus, 'state'> {
  state: ObservedState;
}

const key = (r: ServiceRef): string => `${r.namespace}/${r.name}`;

function sortedJson(v: Record<string, string> | undefined | null): string {
  return JSON.stringify(Object.entries(v ?? {}).sort(([a], [b]) => (a < b ? -1 : 1)));
}

/** The owned fields in which `live` differs from `desired`, named as a person reads them. */
export function differingFields(desired: Service, live: Service): string[] {
  const out: string[] = [];
  const ds = desired.spec ?? {};
  const ls = live.spec ?? {};
  if ((ds.type ?? 'ClusterIP') !== (ls.type ?? 'ClusterIP')) out.push('type');
  if (ds.externalName !== ls.externalName) out.push('externalName');
  if (sortedJson(ds.selector) !== sortedJson(ls.selector)) out.push('selector');
  const ports = (s: typeof ds) =>
    JSON.stringify((s.ports ?? []).map((p) => [p.name ?? '', p.port, p.protocol ?? 'TCP']));
  const targets = (s: typeof ds) => JSON.stringify((s.ports ?? []).map((p) => p.targetPort ?? p.port));
  if (ports(ds) !== ports(ls)) out.push('ports');
  if (targets(ds) !== targets(ls)) out.push('targetPort');
  const subset = (
    want: Record<string, string> | undefined | null,
    have: Record<string, string> | undefined | null,
  ) => Object.entries(want ?? {}).every(([k, v]) => (have ?? {})[k] === v);
  if (!subset(desired.metadata.labels, live.metadata.labels)) out.push('labels');
  if (!subset(desired.metadata.annotations, live.metadata.annotations)) out.push('annotations');
  // needsUpdate also compares keys we own that are absent from desired (removed ones).
  if (out.length === 0 && needsUpdate(desired, live)) out.push('labels or annotations');
  return out;
}

type Role = 'alias' | 'internal Service';

/**
 * The last comparison of each planned Service with what the cache held, by object identity: the
 * planned objects live until the next pass and the cache replaces (never mutates) an object it
 * updates, so an answer holds while both objects are the same. `/status` and `/readyz` then cost
 * O(endpoints) map lookups, not a field-by-field comparison of every Service on every request (an
 * alias of a large hostname group is shared by all of the group's endpoints).
 */
const gapMemo = new WeakMap<Service, { live: Service; role: Role; gap: string | undefined }>();

function compare(role: Role, want: Service, live: Service): string | undefined {
  const hit = gapMemo.get(want);
  if (hit && hit.live === live && hit.role === role) return hit.gap;
  const gap = needsUpdate(want, live)
    ? `${role} differs: ${differingFields(want, live).join(', ')}`
    : undefined;
  gapMemo.set(want, { live, role, gap });
  return gap;
}

/** Why one planned Service is not (yet) in the cluster as desired, or undefined when it is. */
function serviceGap(
  role: Role,
  ref: ServiceRef | undefined,
  desired: ReadonlyMap<string, Service>,
  observed: (ref: ServiceRef) => Service | undefined,
): string | undefined {
  if (!ref) return undefined;
  const want = desired.get(key(ref));
  const live = observed(ref);
  if (!live) return `${role} not yet written`;
  if (!want) return undefined;
  return compare(role, want, live);
}

/**
 * The observed status of each endpoint: a planned `projected` is `projected` only when both its
 * Services are observed as desired, else `pending` with what is missing. Other states (errors,
 * conflicts, not-selected) are decisions about the endpoint, reported as planned.
 */
export function observedStatuses(
  planned: readonly EndpointStatus[],
  desired: ReadonlyMap<string, Service>,
  observed: (ref: ServiceRef) => Service | undefined,
): ObservedStatus[] {
  return planned.map((s) => {
    if (s.state !== 'projected') return s;
    // The name is still held by a Service whose delete waits on finalizers: nothing is written
    // until it is gone (then the next pass creates it again).
    const held = [
      ['internal Service', s.internalService],
      ['alias', s.aliasService],
    ] as const;
    for (const [role, ref] of held) {
      const live = ref ? observed(ref) : undefined;
      if (live && isDeleting(live))
        return { ...s, state: 'deleting', reason: `${role} ${key(ref!)} ${deletingReason(live)}` };
    }
    const gaps = [
      serviceGap('internal Service', s.internalService, desired, observed),
      serviceGap('alias', s.aliasService, desired, observed),
    ].filter((g): g is string => g !== undefined);
    return gaps.length === 0 ? s : { ...s, state: 'pending', reason: gaps.join('; ') };
  });
}

/** For `/readyz`: how many planned-projected endpoints the cluster does not show yet, with an example. */
export function convergenceGap(statuses: readonly ObservedStatus[]): { pending: number; example?: string } {
  const pending = statuses.filter((s) => s.state === 'pending');
  const first = pending[0];
  return { pending: pending.length, ...(first ? { example: `${first.url}: ${first.reason}` } : {}) };
}
