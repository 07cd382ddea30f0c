import { z } from 'zod';
import type { ConfigMap } from '../../kube/objects.js';
import { hostPortProblem } from '../../net/host-port.js';
import { ROLE_LABEL, type InstallIdentity } from '../identity.js';
import { isOwnedBy, ownershipLabels } from './labels.js';

/**
 * The install record: one ConfigMap in the operator namespace that only the controller writes
 * (its service account alone has update rights on that name). It carries what the forwarders
 * must not take from anything a Service writer can set, starting with the binding ingress
 * address from the registration. Format fixed in docs/projection.md "Install record".
 */

/** Data key: `host:port` of the binding ingress from the operator registration. */
export const INGRESS_ADDRESS_KEY = 'ingress-address';
/** Data key: the management API's operator id the address came from (for logs and `check`). */
export const OPERATOR_ID_KEY = 'operator-id';

/**
 * Data key: the uids of the internal Services this install's controller created, comma-separated.
 * Only Services whose uid is here give port claims and name aliases (docs/projection.md
 * "Ownership"): a hand-made Service with our labels in the operator namespace steers nothing.
 */
export const INTERNAL_SERVICES_KEY = 'internal-services';
/** A uid is 36 bytes (+1 separator): 20,000 of them stay far below a ConfigMap's 1 MiB. */
export const MAX_RECORDED_INTERNAL_SERVICES = 20_000;

/**
 * Data key: the write-ahead entries (docs/controller.md "Ownership"): `<namespace>/<name>` of
 * every Service the leader is about to create, written before the create, sorted, `,`-separated.
 * A Service at a listed name carrying this install's labels is ours; its entry goes once its uid
 * is recorded (internal Services in `internal-services`, aliases on the internal Services that
 * name them) or its name has stayed empty for the grace period.
 */
export const INTENTS_KEY = 'intents';

/** The role label value that, with the ownership labels, marks the install record. */
export const INSTALL_RECORD_ROLE = 'install-record';

/**
 * Whether a ConfigMap is this install's record: all ownership labels and the record's role. One
 * without them proves nothing and is never overwritten (someone else created it first).
 */
export function isInstallRecordOf(
  cm: { metadata: { labels?: Record<string, string> | undefined } },
  id: InstallIdentity,
): boolean {
  return isOwnedBy(cm, id) && cm.metadata.labels?.[ROLE_LABEL] === INSTALL_RECORD_ROLE;
}

/** `<release>-install`: the ConfigMap's name. */
export function installRecordName(id: InstallIdentity): string {
  return `${id.release}-install`;
}

export interface InstallRecord {
  /** `host:port` of the binding ingress; undefined while the controller has not registered. */
  ingressAddress?: string | undefined;
  operatorId?: string | undefined;
  /** Uids of the internal Services the controller created; undefined: never recorded (an upgrade). */
  internalServices?: readonly string[];
  /** `namespace/name` of the Services the leader is about to create (write-ahead entries). */
  intents?: readonly string[];
}

/** The `internal-services` value: sorted, so one set is always one string. */
export function formatInternalServices(uids: Iterable<string>): string {
  return [...new Set(uids)].sort().join(',');
}

/** The ConfigMap the controller writes for `record`. */
export function installRecordConfigMap(id: InstallIdentity, record: InstallRecord): ConfigMap {
  const data: Record<string, string> = {};
  if (record.ingressAddress !== undefined) data[INGRESS_ADDRESS_KEY] = record.ingressAddress;
  if (record.operatorId !== undefined) data[OPERATOR_ID_KEY] = record.operatorId;
  if (record.internalServices !== undefined)
    data[INTERNAL_SERVICES_KEY] = formatInternalServices(record.internalServices);
  // No entries, no key: a settled record reads as it did before write-ahead entries existed.
  if (record.intents !== undefined && record.intents.length > 0)
    data[INTENTS_KEY] = formatInternalServices(record.intents);
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: installRecordName(id),
      namespace: id.operatorNamespace,
      labels: { ...ownershipLabels(id), [ROLE_LABEL]: INSTALL_RECORD_ROLE },
    },
    data,
  };
}

const RecordData = z.object({
  [INGRESS_ADDRESS_KEY]: z
    .string()
    .superRefine((s, ctx) => {
      const problem = hostPortProblem(s);
      if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
    })
    .optional(),
  [OPERATOR_ID_KEY]: z.string().optional(),
});

const InternalServicesValue = z
  .string()
  .regex(/^([A-Za-z0-9-]{1,64}(,[A-Za-z0-9-]{1,64})*)?$/, 'must be Service uids separated by ","')
  .refine((s) => s.split(',').length <= MAX_RECORDED_INTERNAL_SERVICES, {
    message: `must hold at most ${MAX_RECORDED_INTERNAL_SERVICES} uids`,
  });

const IntentsValue = z
  .string()
  .regex(
    /^([a-z0-9][a-z0-9-]{0,62}\/[a-z][a-z0-9-]{0,62}(,[a-z0-9][a-z0-9-]{0,62}\/[a-z][a-z0-9-]{0,62})*)?$/,
    'must be namespace/name entries separated by ","',
  )
  .refine((s) => s.split(',').length <= MAX_RECORDED_INTERNAL_SERVICES, {
    message: `must hold at most ${MAX_RECORDED_INTERNAL_SERVICES} entries`,
  });

/** The `intents` list of a live record (absent key: none); a malformed value is refused with the rule. */
export function parseRecordedIntents(
  cm: ConfigMap | undefined,
): { ok: true; keys: readonly string[] } | { ok: false; message: string } {
  const value = cm?.data?.[INTENTS_KEY];
  if (cm === undefined || value === undefined) return { ok: true, keys: [] };
  const r = IntentsValue.safeParse(value);
  if (!r.success)
    return {
      ok: false,
      message: `ConfigMap ${cm.metadata.name} data.${INTENTS_KEY}: ${r.error.issues[0]!.message}`,
    };
  return { ok: true, keys: r.data === '' ? [] : r.data.split(',') };
}

/**
 * Reads a live install record's registration part (what the forwarders need); a malformed value
 * is refused with the key and the rule. The `internal-services` key is read apart
 * (parseRecordedInternalServices), so a bad list never costs the forwarders their ingress.
 */
export function parseInstallRecord(
  cm: ConfigMap,
): { ok: true; record: InstallRecord } | { ok: false; message: string } {
  const r = RecordData.safeParse(cm.data ?? {});
  if (!r.success) {
    const issue = r.error.issues[0]!;
    return {
      ok: false,
      message: `ConfigMap ${cm.metadata.name} data.${issue.path.join('.')}: ${issue.message}`,
    };
  }
  const record: InstallRecord = {};
  if (r.data[INGRESS_ADDRESS_KEY] !== undefined) record.ingressAddress = r.data[INGRESS_ADDRESS_KEY];
  if (r.data[OPERATOR_ID_KEY] !== undefined) record.operatorId = r.data[OPERATOR_ID_KEY];
  return { ok: true, record };
}

/**
 * The `internal-services` list of a live install record. `uids` undefined: no record, or a record
 * without the key (an upgrade from a version without it; docs/projection.md "Ownership"). A
 * malformed value is refused with the key and the rule.
 */
export function parseRecordedInternalServices(
  cm: ConfigMap | undefined,
): { ok: true; uids: readonly string[] | undefined } | { ok: false; message: string } {
  const value = cm?.data?.[INTERNAL_SERVICES_KEY];
  if (cm === undefined || value === undefined) return { ok: true, uids: undefined };
  const r = InternalServicesValue.safeParse(value);
  if (!r.success) {
    return {
      ok: false,
      message: `ConfigMap ${cm.metadata.name} data.${INTERNAL_SERVICES_KEY}: ${r.error.issues[0]!.message}`,
    };
  }
  return { ok: true, uids: r.data === '' ? [] : r.data.split(',') };
}

/**
 * The list of internal Services a live record gives (controller and forwarders read it alike):
 * undefined when there is none yet (every labelled internal Service counts) or the value is
 * malformed (reported; the leader lists them again); empty when the ConfigMap is not this
 * install's (nothing counts: whoever could create it must not choose what counts).
 */
export function recordedInternalOf(
  cm: ConfigMap | undefined,
  id: InstallIdentity,
): { uids: ReadonlySet<string> | undefined; problem?: string } {
  if (cm === undefined) return { uids: undefined };
  if (!isInstallRecordOf(cm, id))
    return {
      uids: new Set(),
      problem: `ConfigMap ${cm.metadata.name} lacks this install's labels; its ${INTERNAL_SERVICES_KEY} is ignored and no internal Service counts`,
    };
  const parsed = parseRecordedInternalServices(cm);
  if (!parsed.ok) return { uids: undefined, problem: parsed.message };
  return { uids: parsed.uids && new Set(parsed.uids) };
}
