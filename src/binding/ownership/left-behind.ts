import type { Service } from '../../kube/objects.js';
import {
  MANAGED_BY_LABEL,
  MANAGED_BY_VALUE,
  REASON_ANNOTATION,
  ROLE_ALIAS,
  ROLE_LABEL,
  STATE_LABEL,
} from '../identity.js';
import { servedEndpointIds } from '../service-format.js';

/**
 * Aliases left behind (docs/controller.md "Ownership"): Services outside the operator namespace
 * that carry this install's alias labels but that no live projection backs, so this install
 * neither manages nor deletes them. Two kinds:
 *  - **lost label**: `app.kubernetes.io/managed-by` was removed (the instance, operator-namespace
 *    and role labels are still ours). A tenant's way of saying "leave it": never deleted.
 *  - **unanchored**: all our labels, but no internal Service of this install names it and no
 *    write-ahead entry or write of this process proves it (a hand-labelled Service, or ours after
 *    its proof went).
 * Both are listed in `/status`. One write is allowed, and only on a lost-label alias this install
 * provably created (its uid recorded on one of our proven internal Services, now or earlier in
 * this process): its `endpoint-binder.io/state` stops saying `projected`, which it no longer is.
 * Pure.
 */

/** The state label value a left-behind alias gets instead of `projected`. */
export const LEFT_BEHIND_STATE = 'left-behind';

export interface LeftBehindAlias {
  namespace: string;
  name: string;
  /** One human line: what happened and the fix. */
  reason: string;
}

export interface LeftBehindInput {
  /** Services with our instance, operator-namespace and alias role labels but not `managed-by`. */
  lostLabel: readonly Service[];
  /** Labelled Services outside the operator namespace that no proof makes ours. */
  unanchored: readonly Service[];
  /** Alias uids this install provably created (recorded on a proven internal Service, now or before). */
  provenAliasUids: ReadonlySet<string>;
  operatorNamespace: string;
}

export interface LeftBehind {
  aliases: LeftBehindAlias[];
  /** Lost-label aliases this install provably created whose state label still says otherwise: relabel. */
  relabel: Service[];
}

const keyOf = (s: Service): string => `${s.metadata.namespace}/${s.metadata.name}`;

function served(svc: Service): string {
  const ids = servedEndpointIds(svc.metadata.annotations);
  return ids.length > 0 ? ` (endpoint${ids.length > 1 ? 's' : ''} ${ids.join(', ')})` : '';
}

/** The reason annotation a relabelled alias carries (also what `/status` says of it). */
export function lostLabelReason(svc: Service): string {
  return (
    `this install created this alias${served(svc)} but it lost the label ${MANAGED_BY_LABEL}=${MANAGED_BY_VALUE}, ` +
    `so it is no longer managed or deleted by the controller; restore the label to have it managed again, ` +
    `or delete it (kubectl -n ${svc.metadata.namespace} delete service ${svc.metadata.name})`
  );
}

function unprovenLostLabelReason(svc: Service): string {
  return (
    `carries this install's alias labels${served(svc)} without ${MANAGED_BY_LABEL}=${MANAGED_BY_VALUE}, and no ` +
    `internal Service of this install records it, so it is left untouched; delete it if nothing uses it ` +
    `(kubectl -n ${svc.metadata.namespace} delete service ${svc.metadata.name})`
  );
}

function unanchoredReason(svc: Service): string {
  return (
    `carries this install's labels${served(svc)} but no internal Service of this install names it ` +
    `(not provably this install's), so it is left untouched; delete it if nothing uses it ` +
    `(kubectl -n ${svc.metadata.namespace} delete service ${svc.metadata.name})`
  );
}

export function leftBehindAliases(input: LeftBehindInput): LeftBehind {
  const aliases: LeftBehindAlias[] = [];
  const relabel: Service[] = [];
  const ref = (s: Service) => ({ namespace: s.metadata.namespace ?? '', name: s.metadata.name });
  for (const svc of input.lostLabel) {
    if (svc.metadata.namespace === input.operatorNamespace) continue;
    if (svc.metadata.labels?.[ROLE_LABEL] !== ROLE_ALIAS) continue;
    const uid = svc.metadata.uid;
    const ours = uid !== undefined && input.provenAliasUids.has(uid);
    aliases.push({ ...ref(svc), reason: ours ? lostLabelReason(svc) : unprovenLostLabelReason(svc) });
    if (ours && needsRelabel(svc)) relabel.push(svc);
  }
  for (const svc of input.unanchored) {
    if (svc.metadata.namespace === input.operatorNamespace) continue;
    aliases.push({ ...ref(svc), reason: unanchoredReason(svc) });
  }
  aliases.sort((a, b) => (`${a.namespace}/${a.name}` < `${b.namespace}/${b.name}` ? -1 : 1));
  relabel.sort((a, b) => (keyOf(a) < keyOf(b) ? -1 : 1));
  return { aliases, relabel };
}

function needsRelabel(svc: Service): boolean {
  return (
    svc.metadata.labels?.[STATE_LABEL] !== LEFT_BEHIND_STATE ||
    svc.metadata.annotations?.[REASON_ANNOTATION] !== lostLabelReason(svc)
  );
}

/**
 * The object a relabel writes: `svc` as observed (its resourceVersion is the write's
 * precondition, so a change made since fails with a Conflict instead of being overwritten), with
 * only our own state label and reason annotation changed. Nothing else of the object is touched.
 */
export function relabelledLeftBehind(svc: Service): Service {
  return {
    ...svc,
    metadata: {
      ...svc.metadata,
      labels: { ...svc.metadata.labels, [STATE_LABEL]: LEFT_BEHIND_STATE },
      annotations: { ...svc.metadata.annotations, [REASON_ANNOTATION]: lostLabelReason(svc) },
    },
  };
}
