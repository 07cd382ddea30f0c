import { z } from 'zod';
import type { ConfigMap } from '../kube/objects.js';
import { hostPortProblem } from '../net/host-port.js';
import type { InstallIdentity } from './identity.js';
import { ownershipLabels } from './identity.js';

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

/** `<release>-install`: the ConfigMap's name. */
export function installRecordName(id: InstallIdentity): string {
  return `${id.release}-install`;
}

export interface InstallRecord {
  /** `host:port` of the binding ingress; undefined while the controller has not registered. */
  ingressAddress?: string;
  operatorId?: string;
}

/** The ConfigMap the controller writes for `record`. */
export function installRecordConfigMap(id: InstallIdentity, record: InstallRecord): ConfigMap {
  const data: Record<string, string> = {};
  if (record.ingressAddress !== undefined) data[INGRESS_ADDRESS_KEY] = record.ingressAddress;
  if (record.operatorId !== undefined) data[OPERATOR_ID_KEY] = record.operatorId;
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: installRecordName(id),
      namespace: id.operatorNamespace,
      labels: { ...ownershipLabels(id), 'endpoint-binder.io/role': 'install-record' },
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

/** Reads a live install record; a malformed value is refused with the key and the rule. */
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
