import {
  INSTANCE_LABEL,
  MANAGED_BY_LABEL,
  MANAGED_BY_VALUE,
  OPERATOR_NAMESPACE_LABEL,
  ROLE_LABEL,
  type InstallIdentity,
} from '../identity.js';
import { servedEndpointIds } from '../service-format.js';
import type { Service } from '../../kube/objects.js';

/**
 * Why a Service holding a name this install wants is not this install's, when it looks like one
 * of ours that lost the `managed-by` label (someone edited it): the state `name-conflict` then
 * says so and how to fix it, instead of the generic "not managed by this install". Undefined for
 * any other holder. Pure.
 */
export function lostLabelDetail(live: Service, id: InstallIdentity): string | undefined {
  const labels = live.metadata.labels ?? {};
  if (labels[MANAGED_BY_LABEL] === MANAGED_BY_VALUE) return undefined;
  if (labels[INSTANCE_LABEL] !== id.release || labels[OPERATOR_NAMESPACE_LABEL] !== id.operatorNamespace)
    return undefined;
  const role = labels[ROLE_LABEL];
  if (role !== 'alias' && role !== 'internal') return undefined;
  const ids = servedEndpointIds(live.metadata.annotations);
  const served = ids.length > 0 ? ` of endpoint${ids.length > 1 ? 's' : ''} ${ids.join(', ')}` : '';
  return (
    `was this install's ${role === 'alias' ? 'alias' : 'internal'} Service${served} but has lost the label ` +
    `${MANAGED_BY_LABEL}=${MANAGED_BY_VALUE}; it is left untouched: restore the label to have it managed again, ` +
    `or delete it to have it created anew`
  );
}
