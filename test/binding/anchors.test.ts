import { describe, expect, it } from 'vitest';
import { anchorOwned } from '../../src/binding/ownership/index.js';
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

  it('trusts an internal Service only when the install record lists its uid (a hand-made one claims no port, names no alias)', () => {
    const withUid = (s: Service, uid: string): Service => ({ ...s, metadata: { ...s.metadata, uid } });
    const ours = withUid(svc('ops', 'ep-a', 'internal', 'http://api.prod:80'), 'u-ours');
    // It records the uid of the alias it names (item 3(b)).
    ours.metadata.annotations!['endpoint-binder.io/alias'] = 'prod/api/u-api';
    // Hand-made: our labels, a ports-bearing name, pointing at a tenant Service to take over.
    const handMade = withUid(svc('ops', 'ep-b', 'internal', 'http://web.prod:80'), 'u-hand');
    const written = withUid(svc('ops', 'ep-c', 'internal', 'http://new.prod:80'), 'u-new');
    const api = withUid(svc('prod', 'api', 'alias'), 'u-api');
    const web = svc('prod', 'web', 'alias');
    const other = svc('ops', 'eb-install-helper', 'other');
    const r = anchorOwned(
      [ours, handMade, written, api, web, other],
      'ops',
      (s) => s.metadata.uid === 'u-new',
      new Set(['u-ours']),
    );
    const keys = (l: Service[]): string[] => l.map((s) => `${s.metadata.namespace}/${s.metadata.name}`);
    expect(keys(r.trusted)).toEqual(['ops/ep-a', 'ops/ep-c', 'prod/api', 'ops/eb-install-helper']);
    expect(keys(r.unanchored)).toEqual(['ops/ep-b', 'prod/web']);
    // No list yet (an upgrade from a version without it): every labelled internal Service counts.
    expect(keys(anchorOwned([handMade, web], 'ops', () => false, undefined).trusted)).toEqual([
      'ops/ep-b',
      'prod/web',
    ]);
    // An empty list trusts none.
    expect(keys(anchorOwned([handMade, web], 'ops', () => false, new Set()).trusted)).toEqual([]);
  });

  it('trusts an alias only when an internal Service of this install records its uid: a labelled tenant Service at that name is left alone', () => {
    const withUid = (s: Service, uid: string): Service => ({ ...s, metadata: { ...s.metadata, uid } });
    const internal = withUid(svc('ops', 'ep-a', 'internal', 'http://api.prod:80'), 'u-int');
    const internalShop = withUid(svc('ops', 'ep-s', 'internal', 'http://shop.prod:80'), 'u-int-s');
    internal.metadata.annotations!['endpoint-binder.io/alias'] = 'prod/api/u-api';
    // Another name's uid, or a uid recorded for another name, anchors nothing.
    internalShop.metadata.annotations!['endpoint-binder.io/alias'] = 'prod/api/u-shop';
    const api = withUid(svc('prod', 'api', 'alias'), 'u-api');
    // A tenant's Service at a name an endpoint wants, our labels patched on: named, uid not recorded.
    const shop = withUid(svc('prod', 'shop', 'alias'), 'u-shop');
    const recorded = new Set(['u-int', 'u-int-s']);
    const keys = (l: Service[]): string[] => l.map((s) => `${s.metadata.namespace}/${s.metadata.name}`);
    const r = anchorOwned([internal, internalShop, api, shop], 'ops', () => false, recorded);
    expect(keys(r.trusted)).toEqual(['ops/ep-a', 'ops/ep-s', 'prod/api']);
    expect(keys(r.unanchored)).toEqual(['prod/shop']);
    // This process created it (its internal Service is written after it in the same pass).
    expect(keys(anchorOwned([internalShop, shop], 'ops', (s) => s === shop, recorded).trusted)).toContain(
      'prod/shop',
    );
    // No list of internal Services yet (an upgrade from a version that recorded neither): the name is enough once.
    expect(keys(anchorOwned([internalShop, shop], 'ops', () => false, undefined).trusted)).toContain(
      'prod/shop',
    );
  });
});
