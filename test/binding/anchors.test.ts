import { describe, expect, it } from 'vitest';
import { anchorOwned } from '../../src/binding/anchors.js';
import type { Service } from '../../src/kube/objects.js';

const svc = (namespace: string, name: string, role: string, url?: string): Service => ({
  metadata: {
    namespace,
    name,
    labels: { 'endpoint-binder.io/role': role },
    ...(url ? { annotations: { 'endpoint-binder.io/endpoint-url': url } } : {}),
  },
});

describe('anchorOwned: labels are not ownership outside the operator namespace', () => {
  it('trusts the operator namespace and the aliases our internal Services name; nothing else', () => {
    const internal = svc('ops', 'ep-a', 'internal', 'http://api.prod:80');
    const alias = svc('prod', 'api', 'alias');
    const labelled = svc('kube-system', 'kube-dns', 'alias');
    const handMade = svc('ops', 'hand', 'internal');
    // An "internal" Service outside the operator namespace names nothing.
    const outside = svc('prod', 'fake', 'internal', 'http://web.prod:80');
    const web = svc('prod', 'web', 'alias');
    const r = anchorOwned([internal, alias, labelled, handMade, outside, web], 'ops');
    expect(r.trusted.map((s) => `${s.metadata.namespace}/${s.metadata.name}`)).toEqual([
      'ops/ep-a',
      'prod/api',
      'ops/hand',
    ]);
    expect(r.unanchored.map((s) => `${s.metadata.namespace}/${s.metadata.name}`)).toEqual([
      'kube-system/kube-dns',
      'prod/fake',
      'prod/web',
    ]);
  });
});
