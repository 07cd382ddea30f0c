import { describe, expect, it } from 'vitest';
import type { FidelityServer, Loose } from './server.js';

/** Server-side printing: `Accept: application/json;as=Table;v=v1;g=meta.k8s.io`, as kubectl asks. */
export function defineTables(server: FidelityServer): void {
  describe('Table output', () => {
    const TABLE = { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' };
    const columns = (t: Loose) => t.columnDefinitions.map((c: Loose) => `${c.name}:${c.type}:${c.priority}`);

    it('Services, Leases, Namespaces and ConfigMaps print the real columns and cells', async () => {
      const ns = await server.namespace();
      const svc = await server.api('POST', `/api/v1/namespaces/${ns}/services`, {
        metadata: { name: 'web', labels: { app: 'web' } },
        spec: {
          ports: [
            { port: 80, name: 'http' },
            { port: 443, name: 'https' },
          ],
          selector: { app: 'web' },
        },
      });
      const t = await server.api('GET', `/api/v1/namespaces/${ns}/services`, undefined, { headers: TABLE });
      expect(t.status, JSON.stringify(t.body)).toBe(200);
      expect(t.body).toMatchObject({ kind: 'Table', apiVersion: 'meta.k8s.io/v1' });
      expect(t.body.metadata.resourceVersion).toMatch(/^\d+$/);
      expect(columns(t.body)).toEqual([
        'Name:string:0',
        'Type:string:0',
        'Cluster-IP:string:0',
        'External-IP:string:0',
        'Port(s):string:0',
        'Age:string:0',
        'Selector:string:1',
      ]);
      expect(t.body.rows).toHaveLength(1);
      const [name, type, ip, external, ports, age, selector] = t.body.rows[0].cells;
      expect([name, type, ip, external, ports, selector]).toEqual([
        'web',
        'ClusterIP',
        svc.body.spec.clusterIP,
        '<none>',
        '80/TCP,443/TCP',
        'app=web',
      ]);
      expect(age).toMatch(/^\d+s$/);
      const row = t.body.rows[0].object;
      expect(row).toMatchObject({
        kind: 'PartialObjectMetadata',
        apiVersion: 'meta.k8s.io/v1',
        metadata: { name: 'web', namespace: ns },
      });
      expect(row.spec).toBeUndefined();

      await server.api('POST', `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases`, {
        metadata: { name: 'leader' },
        spec: { holderIdentity: 'pod-a' },
      });
      const lt = await server.api('GET', `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases`, undefined, {
        headers: TABLE,
      });
      expect(columns(lt.body)).toEqual(['Name:string:0', 'Holder:string:0', 'Age:string:0']);
      expect(lt.body.rows[0].cells.slice(0, 2)).toEqual(['leader', 'pod-a']);

      const nt = await server.api('GET', `/api/v1/namespaces/${ns}`, undefined, { headers: TABLE });
      expect(columns(nt.body)).toEqual(['Name:string:0', 'Status:string:0', 'Age:string:0']);
      expect(nt.body.rows[0].cells.slice(0, 2)).toEqual([ns, 'Active']);

      await server.api('POST', `/api/v1/namespaces/${ns}/configmaps`, {
        metadata: { name: 'cm' },
        data: { a: '1', b: '2' },
      });
      const ct = await server.api('GET', `/api/v1/namespaces/${ns}/configmaps/cm`, undefined, {
        headers: TABLE,
      });
      expect(columns(ct.body)).toEqual(['Name:string:0', 'Data:string:0', 'Age:string:0']);
      expect(ct.body.rows[0].cells.slice(0, 2)).toEqual(['cm', 2]);
    });

    it('includeObject=Object carries the whole object; anything else but None/Metadata is 400', async () => {
      const ns = await server.namespace();
      await server.api('POST', `/api/v1/namespaces/${ns}/services`, {
        metadata: { name: 'web' },
        spec: { ports: [{ port: 80 }] },
      });
      const t = await server.api('GET', `/api/v1/namespaces/${ns}/services?includeObject=Object`, undefined, {
        headers: TABLE,
      });
      expect(t.body.rows[0].object).toMatchObject({
        kind: 'Service',
        apiVersion: 'v1',
        spec: { ports: [{ port: 80 }] },
      });
      const none = await server.api(
        'GET',
        `/api/v1/namespaces/${ns}/services?includeObject=None`,
        undefined,
        { headers: TABLE },
      );
      expect(none.body.rows[0].object).toBeNull();
      const bad = await server.api('GET', `/api/v1/namespaces/${ns}/services?includeObject=All`, undefined, {
        headers: TABLE,
      });
      expect(bad.status).toBe(400);
      expect(bad.body).toMatchObject({
        reason: 'BadRequest',
        message: `Unable to convert to Table as requested: includeObject: Invalid value: "All": must be 'Metadata', 'Object', 'None', or empty`,
      });
    });
  });
}
