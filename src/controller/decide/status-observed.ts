import { deletingReason, isDeleting, needsUpdate } from '../../binding/plan.js';
import type { EndpointStatus, ServiceRef } from '../../binding/types.js';
import type { Service } from '../../kube/objects.js';

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
  leading = true,
): ObservedStatus[] {
  return planned.map((s) => observedStatus(s, desired, observed, leading));
}

/**
 * One endpoint's observed status (see `observedStatuses`). Only the leader decides that a
 * Service of ours is `unproven`: a follower may see the leader's new Service before the install
 * record that proves it (two watches), so it says `pending` meanwhile.
 */
export function observedStatus(
  s: EndpointStatus,
  desired: ReadonlyMap<string, Service>,
  observed: (ref: ServiceRef) => Service | undefined,
  leading = true,
): ObservedStatus {
  if (s.state === 'unproven' && !leading)
    return {
      ...s,
      state: 'pending',
      reason: `waiting for the leader to record its internal Service (${s.reason})`,
    };
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
}

/**
 * The observed statuses kept current as the cache changes: a new pass (new planned statuses or
 * Services) recomputes all; a Service event recomputes only the endpoints that name that Service.
 * `/status` and `/readyz` are asked while thousands of watch events arrive (a first sync, a tool
 * polling); recomputing every endpoint per request after each event cost more than the sync.
 */
export class ObservedView {
  private statuses: readonly EndpointStatus[] | undefined;
  private desired: ReadonlyMap<string, Service> | undefined;
  private value: ObservedStatus[] = [];
  /** Endpoint positions by the `namespace/name` of each Service they name. */
  private byService = new Map<string, number[]>();
  private readonly dirty = new Set<number>();

  constructor(
    private readonly observed: (ref: ServiceRef) => Service | undefined,
    private readonly leading: () => boolean = () => true,
  ) {}

  /** A Service at `serviceKey` was added, changed or deleted in the cache. */
  serviceChanged(serviceKey: string): void {
    const at = this.byService.get(serviceKey);
    if (at) for (const i of at) this.dirty.add(i);
  }

  /** The observed statuses; a new array whenever anything in it changed, else the same one. */
  current(statuses: readonly EndpointStatus[], desired: ReadonlyMap<string, Service>): ObservedStatus[] {
    if (statuses !== this.statuses || desired !== this.desired) {
      this.statuses = statuses;
      this.desired = desired;
      this.dirty.clear();
      this.byService = new Map();
      statuses.forEach((s, i) => {
        for (const ref of [s.internalService, s.aliasService]) {
          if (!ref) continue;
          const k = key(ref);
          const at = this.byService.get(k);
          if (at) at.push(i);
          else this.byService.set(k, [i]);
        }
      });
      this.value = observedStatuses(statuses, desired, this.observed, this.leading());
      return this.value;
    }
    if (this.dirty.size === 0) return this.value;
    const next = this.value.slice();
    for (const i of this.dirty)
      next[i] = observedStatus(statuses[i]!, desired, this.observed, this.leading());
    this.dirty.clear();
    this.value = next;
    return next;
  }
}

/** For `/readyz`: how many planned-projected endpoints the cluster does not show yet, with an example. */
export function convergenceGap(statuses: readonly ObservedStatus[]): { pending: number; example?: string } {
  const pending = statuses.filter((s) => s.state === 'pending');
  const first = pending[0];
  return { pending: pending.length, ...(first ? { example: `${first.url}: ${first.reason}` } : {}) };
}
