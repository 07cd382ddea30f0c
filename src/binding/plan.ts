import type { Service, ServicePort } from '../kube/objects.js';
import { OWNED_KEY_PREFIX } from './identity.js';
import { EXTRA_KEYS_ANNOTATION, parseExtraKeys } from './services.js';
import type { PlanAction } from './types.js';

/**
 * The write plan: diff(desired, actual) over the fields we own (docs/projection.md "Writes").
 * Pure. Fields the API server fills in are never differences, so a second pass over an unchanged
 * cluster is zero actions.
 */

export interface PlanOptions {
  /** Deletes only after a complete, successful listing of the account's endpoints. */
  allowDeletes: boolean;
  /** Namespaces being deleted: nothing is created, updated or deleted in them. */
  frozenNamespaces: ReadonlySet<string>;
}

type Meta = Record<string, string> | undefined;

/**
 * The keys we own on a live object: the desired ones, every key under our prefix, and the extra
 * keys the live object records we applied (`recorded`; a key dropped from the config is ours to remove).
 */
function ownedMetaEqual(desired: Meta, live: Meta, recorded: readonly string[]): boolean {
  const want = desired ?? {};
  const have = live ?? {};
  for (const [k, v] of Object.entries(want)) if (have[k] !== v) return false;
  for (const k of Object.keys(have)) if (k.startsWith(OWNED_KEY_PREFIX) && !(k in want)) return false;
  for (const k of recorded) if (k in have && !(k in want)) return false;
  return true;
}

/** Live keys that are not ours are kept; ours become exactly the desired ones. */
function writeMeta(desired: Meta, live: Meta, recorded: readonly string[]): Record<string, string> {
  const dropped = new Set(recorded);
  const kept = Object.entries(live ?? {}).filter(([k]) => !k.startsWith(OWNED_KEY_PREFIX) && !dropped.has(k));
  return { ...Object.fromEntries(kept), ...(desired ?? {}) };
}

function recordedExtras(live: Service) {
  return parseExtraKeys(live.metadata.annotations?.[EXTRA_KEYS_ANNOTATION]);
}

function recordsEqual(a: Meta, b: Meta): boolean {
  const ea = Object.entries(a ?? {});
  const bb = b ?? {};
  return ea.length === Object.keys(bb).length && ea.every(([k, v]) => bb[k] === v);
}

function sortedPorts(ports: readonly ServicePort[] | undefined): ServicePort[] {
  return [...(ports ?? [])].sort((a, b) => a.port - b.port || (a.name ?? '').localeCompare(b.name ?? ''));
}

function portsEqual(
  desired: readonly ServicePort[] | undefined,
  live: readonly ServicePort[] | undefined,
): boolean {
  const d = sortedPorts(desired);
  const l = sortedPorts(live);
  return (
    d.length === l.length &&
    d.every((p, i) => {
      const q = l[i]!;
      return (
        p.name === q.name &&
        (p.protocol ?? 'TCP') === (q.protocol ?? 'TCP') &&
        p.port === q.port &&
        p.targetPort === q.targetPort
      );
    })
  );
}

function typeOf(svc: Service): string {
  return svc.spec?.type ?? 'ClusterIP';
}

/** True when `live` differs from `desired` in a field we own. */
export function needsUpdate(desired: Service, live: Service): boolean {
  const ds = desired.spec ?? {};
  const ls = live.spec ?? {};
  const recorded = recordedExtras(live);
  return !(
    ownedMetaEqual(desired.metadata.labels, live.metadata.labels, recorded.labels) &&
    ownedMetaEqual(desired.metadata.annotations, live.metadata.annotations, recorded.annotations) &&
    typeOf(desired) === typeOf(live) &&
    recordsEqual(ds.selector, ls.selector) &&
    ds.externalName === ls.externalName &&
    portsEqual(ds.ports, ls.ports)
  );
}

/**
 * `live` with our fields written over it: server-set fields (clusterIP, ipFamilies, uid,
 * resourceVersion, …) and foreign label and annotation keys are kept, so the result can be sent
 * as an update with the live resourceVersion.
 */
export function writeOwnedFields(desired: Service, live: Service): Service {
  const out = structuredClone(live);
  out.apiVersion ??= desired.apiVersion;
  out.kind ??= desired.kind;
  const recorded = recordedExtras(live);
  out.metadata.labels = writeMeta(desired.metadata.labels, live.metadata.labels, recorded.labels);
  out.metadata.annotations = writeMeta(
    desired.metadata.annotations,
    live.metadata.annotations,
    recorded.annotations,
  );
  const spec = out.spec ?? {};
  const ds = desired.spec ?? {};
  if (ds.type !== undefined) spec.type = ds.type;
  if (ds.selector !== undefined) spec.selector = { ...ds.selector };
  else delete spec.selector;
  if (ds.externalName !== undefined) spec.externalName = ds.externalName;
  else delete spec.externalName;
  // Per port we own name, protocol, port and targetPort; other fields of the matching live port stay.
  // Looked up by map: the target internal Service of a large hostname group has many ports.
  const byName = new Map<string, ServicePort>();
  const byPort = new Map<number, ServicePort>();
  for (const q of live.spec?.ports ?? []) {
    if (q.name !== undefined && !byName.has(q.name)) byName.set(q.name, q);
    if (!byPort.has(q.port)) byPort.set(q.port, q);
  }
  spec.ports = (ds.ports ?? []).map((p) => {
    const match = (p.name !== undefined ? byName.get(p.name) : undefined) ?? byPort.get(p.port);
    return { ...(match ? structuredClone(match) : {}), ...p };
  });
  out.spec = spec;
  return out;
}

/** The API server accepted a delete of this Service and waits for its finalizers to be removed. */
export function isDeleting(svc: Service): boolean {
  return svc.metadata.deletionTimestamp !== undefined;
}

/** Why a Service being deleted is still there: its finalizers, named, or a plain "being deleted". */
export function deletingReason(svc: Service): string {
  // Not in the cached schema (the Service objects are loose): read here, strings only.
  const raw: unknown = svc.metadata['finalizers'];
  const finalizers = Array.isArray(raw) ? raw.filter((f): f is string => typeof f === 'string') : [];
  return finalizers.length > 0
    ? `being deleted since ${svc.metadata.deletionTimestamp ?? '?'}, held by finalizer${finalizers.length > 1 ? 's' : ''} ${finalizers.join(', ')}`
    : `being deleted since ${svc.metadata.deletionTimestamp ?? '?'}`;
}

function namespaceOf(key: string, svc: Service): string {
  return svc.metadata.namespace ?? key.slice(0, key.indexOf('/'));
}

/**
 * Creates, updates, recreates (type changed) and deletes, in that order of kind, each list in
 * key order. `actual` holds only this install's Services, keyed `namespace/name`.
 */
export function plan(
  desired: ReadonlyMap<string, Service>,
  actual: ReadonlyMap<string, Service>,
  opts: PlanOptions,
): PlanAction[] {
  const frozen = (key: string, svc: Service) => opts.frozenNamespaces.has(namespaceOf(key, svc));
  const creates: PlanAction[] = [];
  const updates: PlanAction[] = [];
  const recreates: PlanAction[] = [];
  const deletes: PlanAction[] = [];
  for (const key of [...desired.keys()].sort()) {
    const want = desired.get(key)!;
    if (frozen(key, want)) continue;
    const live = actual.get(key);
    // Being deleted (held by a finalizer): the name frees when the finalizer goes; a write now
    // would be refused or undone, so the plan waits for the watch to show it gone.
    if (live && isDeleting(live)) continue;
    if (!live) creates.push({ op: 'create', key, desired: want });
    else if (typeOf(want) !== typeOf(live)) recreates.push({ op: 'recreate', key, desired: want, live });
    else if (needsUpdate(want, live))
      updates.push({ op: 'update', key, desired: want, object: writeOwnedFields(want, live) });
  }
  if (opts.allowDeletes) {
    for (const key of [...actual.keys()].sort()) {
      const live = actual.get(key)!;
      // A delete already accepted (deletionTimestamp set) is issued once and then waited on.
      if (!desired.has(key) && !frozen(key, live) && !isDeleting(live))
        deletes.push({ op: 'delete', key, live });
    }
  }
  return [...creates, ...updates, ...recreates, ...deletes];
}
