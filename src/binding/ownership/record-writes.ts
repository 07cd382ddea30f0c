import type { ConfigMap } from '../../kube/objects.js';
import type { InstallIdentity } from '../identity.js';
import {
  INGRESS_ADDRESS_KEY,
  installRecordConfigMap,
  INTENTS_KEY,
  INTERNAL_SERVICES_KEY,
  isInstallRecordOf,
  MAX_RECORDED_INTERNAL_SERVICES,
  OPERATOR_ID_KEY,
  parseRecordedIntents,
  parseRecordedInternalServices,
  type InstallRecord,
} from './install-record.js';
import { applyRecordedChange } from './recorded-internal.js';

/**
 * The install record's writing rules (docs/controller.md "Ownership"), pure: the changes the
 * writer (controller/install-record-writer.ts, the I/O) holds pending and folds together, and the
 * ConfigMap one write makes of them and of the record read fresh at write time.
 */

/** A change to the `internal-services` list: applied to the list read fresh at write time. */
export interface InternalServicesChange {
  add: readonly string[];
  remove: readonly string[];
  /** Write-ahead entries (`namespace/name`) to add and to drop (docs/controller.md "Ownership"). */
  addIntents?: readonly string[];
  removeIntents?: readonly string[];
}

export interface SetChange {
  add: ReadonlySet<string>;
  remove: ReadonlySet<string>;
}

/** What one write must set (what the writer has pending): the registration's part, changes to the ownership lists, or all. */
export interface PendingRecordWrite {
  registration?: InstallRecord;
  internal?: SetChange;
  intents?: SetChange;
}

/** `newer` applied after `older`. */
function mergeChange(older: SetChange | undefined, newer: SetChange | undefined): SetChange | undefined {
  if (!older || !newer) return newer ?? older;
  const add = new Set([...older.add].filter((u) => !newer.remove.has(u)));
  const remove = new Set([...older.remove].filter((u) => !newer.add.has(u)));
  for (const u of newer.add) add.add(u);
  for (const u of newer.remove) remove.add(u);
  return { add, remove };
}

/** `newer` applied after `older`. */
export function mergePending(
  older: PendingRecordWrite | undefined,
  newer: PendingRecordWrite | undefined,
): PendingRecordWrite | undefined {
  if (!older) return newer;
  if (!newer) return older;
  const registration = newer.registration ?? older.registration;
  const internal = mergeChange(older.internal, newer.internal);
  const intents = mergeChange(older.intents, newer.intents);
  return {
    ...(registration ? { registration } : {}),
    ...(internal ? { internal } : {}),
    ...(intents ? { intents } : {}),
  };
}

function setChange(
  add: readonly string[] | undefined,
  remove: readonly string[] | undefined,
): SetChange | undefined {
  if ((add?.length ?? 0) === 0 && (remove?.length ?? 0) === 0) return undefined;
  return { add: new Set(add ?? []), remove: new Set(remove ?? []) };
}

/** What a leader's change to the ownership lists asks one write to do. */
export function pendingOfChange(change: InternalServicesChange): PendingRecordWrite {
  const internal = setChange(change.add, change.remove);
  const intents = setChange(change.addIntents, change.removeIntents);
  // The first list is written even when empty (a record without one trusts every labelled Service).
  return {
    internal: internal ?? { add: new Set(), remove: new Set() },
    ...(intents ? { intents } : {}),
  };
}

/** What one write does: refuse a foreign record, create, replace, or nothing. */
export type RecordWrite =
  | { op: 'foreign'; message: string }
  | {
      op: 'create' | 'replace' | 'unchanged';
      object: ConfigMap;
      /** The ownership lists as written (with adds dropped beyond the cap), when this write carries them. */
      listed?: { uids: string[]; dropped: number };
      intents?: { uids: string[]; dropped: number };
    };

/** The write `pending` makes of `existing`, the record as read now (undefined: none yet). */
export function nextInstallRecord(
  identity: InstallIdentity,
  existing: ConfigMap | undefined,
  pending: PendingRecordWrite,
): RecordWrite {
  if (existing && !isInstallRecordOf(existing, identity)) {
    return {
      op: 'foreign',
      message:
        `ConfigMap ${identity.operatorNamespace}/${existing.metadata.name} exists without this install's labels; ` +
        'delete it so the controller can write the install record',
    };
  }
  // The change is applied to the list read now, not to the one the leader saw: a list a
  // previous leader wrote a moment ago keeps its entries.
  const onFresh = (current: readonly string[] | undefined, change: SetChange) =>
    applyRecordedChange(current, change, MAX_RECORDED_INTERNAL_SERVICES);
  const freshUids = pending.internal && parseRecordedInternalServices(existing);
  const listed = pending.internal && onFresh(freshUids?.ok ? freshUids.uids : [], pending.internal);
  const freshIntents = pending.intents && parseRecordedIntents(existing);
  const intents = pending.intents && onFresh(freshIntents?.ok ? freshIntents.keys : [], pending.intents);
  const lists = { ...(listed ? { listed } : {}), ...(intents ? { intents } : {}) };
  const want = installRecordConfigMap(identity, {
    ...pending.registration,
    ...(listed ? { internalServices: listed.uids } : {}),
    ...(intents ? { intents: intents.uids } : {}),
  });
  if (!existing) return { op: 'create', object: want, ...lists };
  const labels = { ...existing.metadata.labels, ...want.metadata.labels };
  // Each part replaces its own keys whole (a key the registration no longer has must go);
  // the part this write does not carry is kept as it is.
  const data: Record<string, string> = { ...existing.data };
  if (pending.registration) {
    delete data[INGRESS_ADDRESS_KEY];
    delete data[OPERATOR_ID_KEY];
  }
  if (listed) delete data[INTERNAL_SERVICES_KEY];
  if (intents) delete data[INTENTS_KEY];
  Object.assign(data, want.data);
  // The resourceVersion read is kept: it is the replace's precondition.
  const object = { ...existing, metadata: { ...existing.metadata, labels }, data };
  const same = sameStrings(existing.data ?? {}, data) && sameStrings(existing.metadata.labels ?? {}, labels);
  return { op: same ? 'unchanged' : 'replace', object, ...lists };
}

function sameStrings(a: Record<string, string>, b: Record<string, string>): boolean {
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => b[k] === a[k]);
}
