import { describe, expect, it } from 'vitest';
import { eventually, type FidelityServer } from './server.js';

/** Namespaces: Terminating, no new content, content removal, the protected namespaces. */
export function defineNamespaces(server: FidelityServer): void {
  describe('namespaces', () => {
    it('a deleted namespace is Terminating, refuses new content, then goes with its content', async () => {
      const ns = await server.namespace('fid-gone');
      const created = await server.api('GET', `/api/v1/namespaces/${ns}`);
      expect(created.body.spec).toEqual({ finalizers: ['kubernetes'] });
      expect(created.body.status).toEqual({ phase: 'Active' });
      expect(created.body.metadata.labels).toEqual({ 'kubernetes.io/metadata.name': ns });
      // A real cluster's root-CA publisher puts kube-root-ca.crt in every namespace; kubesim runs
      // no such controller (documented).
      const rootCa = () => server.api('GET', `/api/v1/namespaces/${ns}/configmaps/kube-root-ca.crt`);
      if (server.kind === 'kube-apiserver')
        await eventually('kube-root-ca.crt', async () =>
          (await rootCa()).status === 200 ? true : undefined,
        );
      else expect((await rootCa()).status).toBe(404);
      await server.api('POST', `/api/v1/namespaces/${ns}/services`, {
        metadata: { name: 'web' },
        spec: { ports: [{ port: 80 }] },
      });
      const w = await server.watch(
        `/api/v1/namespaces?watch=true&fieldSelector=metadata.name%3D${ns}&resourceVersion=${created.body.metadata.resourceVersion}`,
      );
      const del = await server.api('DELETE', `/api/v1/namespaces/${ns}`);
      expect(del.status).toBe(200);
      expect(del.body).toMatchObject({
        kind: 'Namespace',
        metadata: { name: ns },
        status: { phase: 'Terminating' },
      });
      expect(del.body.metadata.deletionTimestamp).toEqual(expect.any(String));
      const refused = await server.api('POST', `/api/v1/namespaces/${ns}/configmaps`, {
        metadata: { name: 'late' },
      });
      // kubesim may already have finished (it removes content after a short delay).
      if (refused.status !== 404) {
        expect(refused.status).toBe(403);
        expect(refused.body).toMatchObject({
          reason: 'Forbidden',
          message: `configmaps "late" is forbidden: unable to create new content in namespace ${ns} because it is being terminated`,
          details: {
            name: 'late',
            kind: 'configmaps',
            causes: [
              {
                reason: 'NamespaceTerminating',
                message: `namespace ${ns} is being terminated`,
                field: 'metadata.namespace',
              },
            ],
          },
        });
        // Deleting it again answers the Terminating namespace, unchanged.
        const again = await server.api('DELETE', `/api/v1/namespaces/${ns}`);
        if (again.status !== 404) {
          expect(again.status).toBe(200);
          expect(again.body).toMatchObject({ kind: 'Namespace', status: { phase: 'Terminating' } });
          expect(again.body.metadata.resourceVersion).toBe(del.body.metadata.resourceVersion);
        }
      }
      await w.waitFor((evs) => evs.some((e) => e.type === 'DELETED'), 'the namespace DELETED', 60_000);
      w.close();
      expect(w.events[0]).toMatchObject({ type: 'MODIFIED', object: { status: { phase: 'Terminating' } } });
      expect(w.events.at(-1)!.type).toBe('DELETED');
      // The real namespace controller writes conditions and clears spec.finalizers on the way (documented).
      const modified = w.events.filter((e) => e.type === 'MODIFIED').length;
      if (server.kind === 'kubesim') expect(modified).toBe(1);
      else expect(modified).toBeGreaterThan(1);
      await eventually('the content gone', async () => {
        const r = await server.api('GET', `/api/v1/namespaces/${ns}/services/web`);
        return r.status === 404 ? r : undefined;
      });
      expect((await server.api('GET', `/api/v1/namespaces/${ns}`)).status).toBe(404);
    });

    it('default and kube-system cannot be deleted; names are DNS-1123 labels', async () => {
      for (const ns of ['default', 'kube-system']) {
        const r = await server.api('DELETE', `/api/v1/namespaces/${ns}`);
        expect(r.status).toBe(403);
        expect(r.body).toMatchObject({
          reason: 'Forbidden',
          message: `namespaces "${ns}" is forbidden: this namespace may not be deleted`,
        });
      }
      const bad = await server.api('POST', '/api/v1/namespaces', { metadata: { name: 'Bad_Name' } });
      expect(bad.status).toBe(422);
      expect(bad.body.details.causes).toEqual([
        {
          reason: 'FieldValueInvalid',
          message:
            "Invalid value: \"Bad_Name\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
          field: 'metadata.name',
        },
      ]);
    });
  });
}
