import { describe, expect, it } from 'vitest';
import type { FidelityServer } from './server.js';

/** Lists: limit/continue paging, label and field selectors, and the errors of bad list options. */
export function defineLists(server: FidelityServer): void {
  describe('lists', () => {
    const names = (body: { items: { metadata: { name: string } }[] }) =>
      body.items.map((i) => i.metadata.name);
    // Leases: a fresh namespace has none on either server (a real one has a ConfigMap, kube-root-ca.crt).
    const leases = (ns: string) => `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases`;
    const seed = async (ns: string) => {
      for (const [name, tier] of [
        ['a', 'web'],
        ['b', 'db'],
        ['c', 'web'],
        ['d', 'cache'],
        ['e', 'web'],
      ]) {
        const r = await server.api('POST', leases(ns), {
          metadata: { name: `cm-${name}`, labels: { tier: tier!, ...(name === 'e' ? { edge: 'yes' } : {}) } },
        });
        if (r.status !== 201) throw new Error(`seed: ${r.status} ${JSON.stringify(r.body)}`);
      }
    };

    it('pages with limit and continue in key order, with remainingItemCount, from one snapshot', async () => {
      const ns = await server.namespace();
      await seed(ns);
      const path = leases(ns);
      const sel = 'labelSelector=tier';
      const p1 = await server.api('GET', `${path}?${sel}&limit=2`);
      expect(p1.status).toBe(200);
      expect(p1.body.kind).toBe('LeaseList');
      expect(names(p1.body)).toEqual(['cm-a', 'cm-b']);
      expect(p1.body.items[0].kind, 'list items carry no kind').toBeUndefined();
      expect(p1.body.metadata.continue).toEqual(expect.any(String));
      // A label selector makes the remaining count unknown (the real server omits it).
      expect(p1.body.metadata.remainingItemCount).toBeUndefined();
      const plain = await server.api('GET', `${path}?limit=2`);
      expect(plain.body.metadata.remainingItemCount).toBe(3);
      // A write after the first page does not show in later pages (a snapshot at p1's RV).
      await server.api('POST', path, { metadata: { name: 'cm-bb', labels: { tier: 'x' } } });
      const p2 = await server.api('GET', `${path}?${sel}&limit=2&continue=${p1.body.metadata.continue}`);
      expect(names(p2.body)).toEqual(['cm-c', 'cm-d']);
      expect(p2.body.metadata.resourceVersion).toBe(p1.body.metadata.resourceVersion);
      const p3 = await server.api('GET', `${path}?${sel}&limit=2&continue=${p2.body.metadata.continue}`);
      expect(names(p3.body)).toEqual(['cm-e']);
      expect(p3.body.metadata.continue).toBeUndefined();
    });

    it('label selectors (=, !=, in, notin, exists, !exists) and field selectors', async () => {
      const ns = await server.namespace();
      await seed(ns);
      const q = async (query: string) => {
        const r = await server.api('GET', `${leases(ns)}?${query}`);
        expect(r.status, `${query}: ${JSON.stringify(r.body)}`).toBe(200);
        return names(r.body);
      };
      expect(await q('labelSelector=tier%3Dweb')).toEqual(['cm-a', 'cm-c', 'cm-e']);
      expect(await q('labelSelector=tier!%3Dweb,tier')).toEqual(['cm-b', 'cm-d']);
      expect(await q('labelSelector=tier%20in%20(db,cache)')).toEqual(['cm-b', 'cm-d']);
      expect(await q('labelSelector=tier%20notin%20(web),tier')).toEqual(['cm-b', 'cm-d']);
      expect(await q('labelSelector=edge')).toEqual(['cm-e']);
      expect(await q('labelSelector=!edge,tier%3Dweb')).toEqual(['cm-a', 'cm-c']);
      expect(await q('fieldSelector=metadata.name%3Dcm-b')).toEqual(['cm-b']);
      expect(await q('fieldSelector=metadata.name!%3Dcm-b&labelSelector=tier%3Dweb')).toEqual([
        'cm-a',
        'cm-c',
        'cm-e',
      ]);
    });

    it('Service field selectors spec.type and spec.clusterIP; an unknown field label is 400', async () => {
      const ns = await server.namespace();
      await server.api('POST', `/api/v1/namespaces/${ns}/services`, {
        metadata: { name: 'alias' },
        spec: { type: 'ExternalName', externalName: 'example.com' },
      });
      await server.api('POST', `/api/v1/namespaces/${ns}/services`, {
        metadata: { name: 'web' },
        spec: { ports: [{ port: 80 }] },
      });
      const ext = await server.api(
        'GET',
        `/api/v1/namespaces/${ns}/services?fieldSelector=spec.type%3DExternalName`,
      );
      expect(names(ext.body)).toEqual(['alias']);
      const noIp = await server.api(
        'GET',
        `/api/v1/namespaces/${ns}/services?fieldSelector=spec.clusterIP%3D`,
      );
      expect(names(noIp.body)).toEqual(['alias']);
      const badSvc = await server.api(
        'GET',
        `/api/v1/namespaces/${ns}/services?fieldSelector=spec.bogus%3Dx`,
      );
      expect(badSvc.status).toBe(400);
      expect(badSvc.body).toMatchObject({
        reason: 'BadRequest',
        message: 'field label not supported: spec.bogus',
      });
      const badCm = await server.api('GET', `/api/v1/namespaces/${ns}/configmaps?fieldSelector=data.x%3Dy`);
      expect(badCm.status).toBe(400);
      expect(badCm.body.message).toBe(
        '"data.x" is not a known field selector: only "metadata.name", "metadata.namespace"',
      );
    });

    it('bad list options: a malformed selector, continue token or resourceVersion, a match without a version', async () => {
      const ns = await server.namespace();
      const path = `/api/v1/namespaces/${ns}/configmaps`;
      const sel = await server.api('GET', `${path}?labelSelector=a%20in`);
      expect(sel.status).toBe(400);
      expect(sel.body).toMatchObject({
        reason: 'BadRequest',
        message: "unable to parse requirement: found '' expected: '('",
      });
      const cont = await server.api('GET', `${path}?limit=1&continue=abc`);
      expect(cont.status).toBe(400);
      expect(cont.body).toMatchObject({
        reason: 'BadRequest',
        message:
          "invalid continue token: continue key is not valid: invalid character 'i' looking for beginning of value",
      });
      const rv = await server.api('GET', `${path}?resourceVersion=abc`);
      expect(rv.status).toBe(400);
      expect(rv.body).toMatchObject({
        reason: 'BadRequest',
        message:
          'invalid resource version: resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax',
      });
      const match = await server.api('GET', `${path}?resourceVersionMatch=Exact`);
      expect(match.status).toBe(422);
      expect(match.body).toMatchObject({
        reason: 'Invalid',
        details: {
          group: 'meta.k8s.io',
          kind: 'ListOptions',
          causes: [{ reason: 'FieldValueForbidden', field: 'resourceVersionMatch' }],
        },
      });
      expect(match.body.message).toBe(
        'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided',
      );
    });

    it('a list at a future resourceVersion is 504 Timeout "Too large resource version"', async () => {
      const ns = await server.namespace();
      const r = await server.api('GET', `/api/v1/namespaces/${ns}/configmaps?resourceVersion=99999999`);
      expect(r.status).toBe(504);
      expect(r.body).toMatchObject({
        reason: 'Timeout',
        details: {
          causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }],
          retryAfterSeconds: 1,
        },
      });
      expect(r.body.message).toMatch(/^Timeout: Too large resource version: 99999999, current: \d+$/);
    });
  });
}
