import {
  INSTANCE_LABEL,
  MANAGED_BY_LABEL,
  MANAGED_BY_VALUE,
  OPERATOR_NAMESPACE_LABEL,
  ROLE_ALIAS,
  ROLE_LABEL,
  type InstallIdentity,
} from '../identity.js';

/**
 * The ownership labels: the first, weakest proof. They select this install's objects and a
 * Service without all of them is never ours, but anyone who may patch a Service can put them on
 * it, so with them alone nothing is proven (proofs.ts adds the install record). Pure.
 */

/** The labels that mark an object as this install's. */
export function ownershipLabels(id: InstallIdentity): Record<string, string> {
  return {
    [MANAGED_BY_LABEL]: MANAGED_BY_VALUE,
    [INSTANCE_LABEL]: id.release,
    [OPERATOR_NAMESPACE_LABEL]: id.operatorNamespace,
  };
}

/** A label selector (`k=v,k=v`) matching exactly this install's objects. */
export function ownershipSelector(id: InstallIdentity, role?: string): string {
  const labels = ownershipLabels(id);
  if (role) labels[ROLE_LABEL] = role;
  return Object.entries(labels)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
}

/** True only when every ownership label is present with this install's value. */
export function isOwnedBy(
  obj: { metadata: { labels?: Record<string, string> | undefined } },
  id: InstallIdentity,
): boolean {
  const labels = obj.metadata.labels ?? {};
  return Object.entries(ownershipLabels(id)).every(([k, v]) => labels[k] === v);
}

/** The labels `lostLabelSelector` matches, as a predicate (for a read model without a server). */
export function hasLostLabel(
  obj: { metadata: { labels?: Record<string, string> | undefined } },
  id: InstallIdentity,
): boolean {
  const labels = obj.metadata.labels ?? {};
  return (
    labels[INSTANCE_LABEL] === id.release &&
    labels[OPERATOR_NAMESPACE_LABEL] === id.operatorNamespace &&
    labels[ROLE_LABEL] === ROLE_ALIAS &&
    labels[MANAGED_BY_LABEL] !== MANAGED_BY_VALUE
  );
}

/** This install's alias labels with `managed-by` absent or changed (`!=` matches an absent label too). */
export function lostLabelSelector(id: InstallIdentity): string {
  return [
    `${INSTANCE_LABEL}=${id.release}`,
    `${OPERATOR_NAMESPACE_LABEL}=${id.operatorNamespace}`,
    `${ROLE_LABEL}=${ROLE_ALIAS}`,
    `${MANAGED_BY_LABEL}!=${MANAGED_BY_VALUE}`,
  ].join(',');
}
