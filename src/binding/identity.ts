/**
 * The install identity and the labels and annotations that carry it. Pure; shared by the
 * controller (which writes them) and the forwarder (which selects on them). The format is fixed
 * in docs/projection.md.
 */

/** One install of endpoint-binder in one cluster: the Helm release name plus the operator namespace. */
export interface InstallIdentity {
  release: string;
  operatorNamespace: string;
}

export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const MANAGED_BY_VALUE = 'endpoint-binder';
export const INSTANCE_LABEL = 'app.kubernetes.io/instance';
export const NAME_LABEL = 'app.kubernetes.io/name';
export const COMPONENT_LABEL = 'app.kubernetes.io/component';
export const OPERATOR_NAMESPACE_LABEL = 'endpoint-binder.io/operator-namespace';
/** `internal` or `alias`. */
export const ROLE_LABEL = 'endpoint-binder.io/role';
/** The projection state of the endpoint an internal Service serves (see `ProjectionState`). */
export const STATE_LABEL = 'endpoint-binder.io/state';

/** The exact endpoint id an internal Service serves (ids may not fit a label value). */
export const ENDPOINT_ID_ANNOTATION = 'endpoint-binder.io/endpoint-id';
/** The canonical URL of that endpoint. */
export const ENDPOINT_URL_ANNOTATION = 'endpoint-binder.io/endpoint-url';
/** On an alias Service: a JSON array of the ids of every endpoint on its hostname, oldest first. */
export const ENDPOINT_IDS_ANNOTATION = 'endpoint-binder.io/endpoint-ids';
/** On an internal Service: JSON object, allocated forwarder port (decimal string) to the canonical URL it serves. */
export const PORTS_ANNOTATION = 'endpoint-binder.io/ports';
/** A human-readable reason for the state, when it is not `projected`. */
export const REASON_ANNOTATION = 'endpoint-binder.io/reason';
/**
 * On an internal Service: `<namespace>/<name>/<uid>` of the alias Service this install created
 * for it. An alias is ours only when an internal Service of this install records its uid
 * (docs/projection.md "Ownership"): labels and the name alone are never enough.
 */
export const ALIAS_ANNOTATION = 'endpoint-binder.io/alias';
/** Set by `endpoint-binder uninstall` under the `retain` policy on Services left behind. */
export const ORPHANED_ANNOTATION = 'endpoint-binder.io/orphaned';

/**
 * Every label and annotation key under this prefix is ours: the plan removes such keys when they
 * are no longer desired, and configured extra labels and annotations cannot set them.
 */
export const OWNED_KEY_PREFIX = 'endpoint-binder.io/';

export const ROLE_INTERNAL = 'internal';
export const ROLE_ALIAS = 'alias';

/** The labels of this install's forwarder pods; the internal Services' selector. */
export function forwarderPodLabels(id: InstallIdentity): Record<string, string> {
  return {
    [NAME_LABEL]: 'endpoint-binder',
    [INSTANCE_LABEL]: id.release,
    [COMPONENT_LABEL]: 'forwarder',
  };
}
