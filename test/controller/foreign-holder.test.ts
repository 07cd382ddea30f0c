import { describe, expect, it } from 'vitest';
import {
  INSTANCE_LABEL,
  MANAGED_BY_LABEL,
  OPERATOR_NAMESPACE_LABEL,
  ROLE_LABEL,
  ENDPOINT_IDS_ANNOTATION,
} from '../../src/binding/identity.js';
import { lostLabelDetail } from '../../src/binding/ownership/index.js';
import type { Service } from '../../src/kube/index.js';

const id = { release: 'eb', operatorNamespace: 'ops' };
const alias = (labels: Record<string, string>): Service => ({
  metadata: {
    namespace: 'prod',
    name: 'web',
    labels,
    annotations: { [ENDPOINT_IDS_ANNOTATION]: JSON.stringify(['ep_1', 'ep_2']) },
  },
});
const ours = { [INSTANCE_LABEL]: 'eb', [OPERATOR_NAMESPACE_LABEL]: 'ops', [ROLE_LABEL]: 'alias' };

describe('a foreign holder that lost our managed-by label (pure)', () => {
  it('is named as our former alias, with the endpoints it served and the fix', () => {
    expect(lostLabelDetail(alias(ours), id)).toBe(
      "was this install's alias Service of endpoints ep_1, ep_2 but has lost the label " +
        `${MANAGED_BY_LABEL}=endpoint-binder; it is left untouched: restore the label to have it ` +
        'managed again, or delete it to have it created anew',
    );
  });

  it('says nothing special about any other holder', () => {
    expect(lostLabelDetail(alias({}), id)).toBeUndefined();
    expect(lostLabelDetail(alias({ ...ours, [INSTANCE_LABEL]: 'other' }), id)).toBeUndefined();
    expect(lostLabelDetail(alias({ ...ours, [ROLE_LABEL]: 'something' }), id)).toBeUndefined();
    expect(lostLabelDetail(alias({ ...ours, [MANAGED_BY_LABEL]: 'endpoint-binder' }), id)).toBeUndefined();
  });
});
