import { describe, expect, it } from 'vitest';
import { METADATA_MERGE_KEYS, strategicMerge } from '../../src/kubesim/strategic-merge.js';
import type { Json } from '../../src/kubesim/types.js';

const keys = { ...METADATA_MERGE_KEYS, 'spec.ports': 'port' };
const svc = (): Json => ({
  metadata: { name: 'web', labels: { a: '1', b: '2' }, finalizers: ['x'] },
  spec: {
    selector: { app: 'web' },
    ports: [
      { name: 'http', port: 80, targetPort: 8080 },
      { name: 'https', port: 443, targetPort: 8443 },
    ],
  },
});

describe('strategic merge patch', () => {
  it('merges list elements by their merge key and keeps the others', () => {
    const out = strategicMerge(svc(), { spec: { ports: [{ port: 80, targetPort: 9090 }] } }, keys) as any;
    expect(out.spec.ports).toEqual([
      { name: 'http', port: 80, targetPort: 9090 },
      { name: 'https', port: 443, targetPort: 8443 },
    ]);
  });

  it('deletes an element with $patch: delete and orders with $setElementOrder (what kubectl apply sends)', () => {
    const patch = {
      spec: {
        ['$setElementOrder/ports']: [{ port: 81 }, { port: 443 }],
        ports: [
          { name: 'http', port: 81, targetPort: 8080 },
          { $patch: 'delete', port: 80 },
        ],
      },
    } as unknown as Json;
    const out = strategicMerge(svc(), patch, keys) as any;
    expect(out.spec.ports).toEqual([
      { name: 'http', port: 81, targetPort: 8080 },
      { name: 'https', port: 443, targetPort: 8443 },
    ]);
  });

  it('replaces a whole list or map with $patch: replace', () => {
    const list = strategicMerge(
      svc(),
      { spec: { ports: [{ $patch: 'replace' }, { name: 'x', port: 1 }] } },
      keys,
    ) as any;
    expect(list.spec.ports).toEqual([{ name: 'x', port: 1 }]);
    const map = strategicMerge(svc(), { metadata: { labels: { $patch: 'replace', c: '3' } } }, keys) as any;
    expect(map.metadata.labels).toEqual({ c: '3' });
  });

  it('deletes keys with null and maps with $patch: delete, like a merge patch', () => {
    const out = strategicMerge(
      svc(),
      { metadata: { labels: { a: null } }, spec: { selector: { $patch: 'delete' } } },
      keys,
    ) as any;
    expect(out.metadata.labels).toEqual({ b: '2' });
    expect(out.spec).not.toHaveProperty('selector');
  });

  it('merges primitive lists with a merge strategy as sets and honours $deleteFromPrimitiveList', () => {
    const added = strategicMerge(svc(), { metadata: { finalizers: ['y', 'x'] } }, keys) as any;
    expect(added.metadata.finalizers).toEqual(['x', 'y']);
    const removed = strategicMerge(
      added,
      { metadata: { '$deleteFromPrimitiveList/finalizers': ['x'] } },
      keys,
    ) as any;
    expect(removed.metadata.finalizers).toEqual(['y']);
  });

  it('replaces lists that have no merge key', () => {
    const out = strategicMerge(
      { spec: { externalIPs: ['1.1.1.1', '2.2.2.2'] } },
      { spec: { externalIPs: ['3.3.3.3'] } },
      keys,
    ) as any;
    expect(out.spec.externalIPs).toEqual(['3.3.3.3']);
  });

  it('refuses a merge-key list element without its key', () => {
    expect(() => strategicMerge(svc(), { spec: { ports: [{ name: 'nokey' }] } }, keys)).toThrow(
      /merge key "port"/,
    );
  });
});
