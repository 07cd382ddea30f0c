import { describe, expect, it } from 'vitest';
import { withoutManagedFields, type FidelityServer } from './server.js';

/**
 * CRUD of Services, ConfigMaps, Leases and Events: server-set metadata, defaults, the Status
 * bodies of 404/409, resourceVersion conflicts on PUT and patch, delete preconditions, and what
 * a delete returns.
 */
export function defineCrud(server: FidelityServer): void {
  describe('CRUD', () => {
    it('a created Service carries server-set metadata, the defaults and an allocated cluster IP', async () => {
      const ns = await server.namespace();
      const r = await server.api('POST', `/api/v1/namespaces/${ns}/services`, {
        metadata: { name: 'web', labels: { app: 'web' } },
        spec: { ports: [{ port: 80 }], selector: { app: 'web' } },
      });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      const svc = withoutManagedFields(r.body);
      expect(Object.keys(svc).sort()).toEqual(['apiVersion', 'kind', 'metadata', 'spec', 'status']);
      expect(svc).toMatchObject({ kind: 'Service', apiVersion: 'v1' });
      expect(Object.keys(svc.metadata).sort()).toEqual(
        ['creationTimestamp', 'labels', 'name', 'namespace', 'resourceVersion', 'uid'].sort(),
      );
      expect(svc.metadata.uid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      expect(svc.metadata.creationTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      expect(svc.metadata.resourceVersion).toMatch(/^\d+$/);
      expect(svc.spec).toEqual({
        ports: [{ protocol: 'TCP', port: 80, targetPort: 80 }],
        selector: { app: 'web' },
        clusterIP: svc.spec.clusterIP,
        clusterIPs: [svc.spec.clusterIP],
        type: 'ClusterIP',
        sessionAffinity: 'None',
        ipFamilies: ['IPv4'],
        ipFamilyPolicy: 'SingleStack',
        internalTrafficPolicy: 'Cluster',
      });
      expect(svc.spec.clusterIP).toMatch(/^10\.(9[6-9]|10[0-9]|11[01])\.\d+\.\d+$/);
      expect(svc.status).toEqual({ loadBalancer: {} });
      const got = await server.api('GET', `/api/v1/namespaces/${ns}/services/web`);
      expect(got.status).toBe(200);
      expect(withoutManagedFields(got.body)).toEqual(svc);
      // managedFields: written by a real server on every write; kubesim keeps none (documented).
      if (server.kind === 'kube-apiserver') expect(r.body.metadata.managedFields).toHaveLength(1);
      else expect(r.body.metadata.managedFields).toBeUndefined();
    });

    it('404 and 409 AlreadyExists answer with the real Status bodies', async () => {
      const ns = await server.namespace();
      const path = `/api/v1/namespaces/${ns}/configmaps`;
      expect((await server.api('POST', path, { metadata: { name: 'cm' }, data: { a: '1' } })).status).toBe(
        201,
      );
      const dup = await server.api('POST', path, { metadata: { name: 'cm' } });
      expect(dup.status).toBe(409);
      expect(dup.body).toEqual({
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'configmaps "cm" already exists',
        reason: 'AlreadyExists',
        details: { name: 'cm', kind: 'configmaps' },
        code: 409,
      });
      // Empty omitempty maps are not stored: no labels, no data.
      const empty = await server.api('POST', path, { metadata: { name: 'empty', labels: {} }, data: {} });
      expect(empty.status).toBe(201);
      expect(empty.body.metadata.labels).toBeUndefined();
      expect(empty.body.data).toBeUndefined();
      const missing = await server.api('GET', `${path}/nope`);
      expect(missing.status).toBe(404);
      expect(missing.body).toEqual({
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'configmaps "nope" not found',
        reason: 'NotFound',
        details: { name: 'nope', kind: 'configmaps' },
        code: 404,
      });
      const ghost = await server.api('POST', `/api/v1/namespaces/${ns}-ghost/configmaps`, {
        metadata: { name: 'x' },
      });
      expect(ghost.status).toBe(404);
      expect(ghost.body).toMatchObject({
        reason: 'NotFound',
        message: `namespaces "${ns}-ghost" not found`,
        details: { name: `${ns}-ghost`, kind: 'namespaces' },
      });
    });

    it('a stale resourceVersion on PUT or in a patch is 409 Conflict; without one a ConfigMap PUT is unconditional', async () => {
      const ns = await server.namespace();
      const path = `/api/v1/namespaces/${ns}/configmaps/cm`;
      const created = await server.api('POST', `/api/v1/namespaces/${ns}/configmaps`, {
        metadata: { name: 'cm' },
        data: { a: '1' },
      });
      const rv0 = created.body.metadata.resourceVersion;
      const put = await server.api('PUT', path, {
        metadata: { name: 'cm', resourceVersion: rv0 },
        data: { a: '2' },
      });
      expect(put.status, JSON.stringify(put.body)).toBe(200);
      expect(Number(put.body.metadata.resourceVersion)).toBeGreaterThan(Number(rv0));
      const conflictMessage =
        'Operation cannot be fulfilled on configmaps "cm": the object has been modified; please apply your changes to the latest version and try again';
      const stale = await server.api('PUT', path, {
        metadata: { name: 'cm', resourceVersion: rv0 },
        data: {},
      });
      expect(stale.status).toBe(409);
      expect(stale.body).toEqual({
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: conflictMessage,
        reason: 'Conflict',
        details: { name: 'cm', kind: 'configmaps' },
        code: 409,
      });
      const patch = await server.api(
        'PATCH',
        path,
        { metadata: { resourceVersion: rv0 }, data: { b: '1' } },
        { contentType: 'application/merge-patch+json' },
      );
      expect(patch.status).toBe(409);
      expect(patch.body.message).toBe(conflictMessage);
      const unconditional = await server.api('PUT', path, { metadata: { name: 'cm' }, data: { c: '3' } });
      expect(unconditional.status, JSON.stringify(unconditional.body)).toBe(200);
      expect(unconditional.body.data).toEqual({ c: '3' });
      const mismatch = await server.api('PUT', path, { metadata: { name: 'other' }, data: {} });
      expect(mismatch.status).toBe(400);
      expect(mismatch.body).toMatchObject({
        reason: 'BadRequest',
        message: 'the name of the object (other) does not match the name on the URL (cm)',
      });
    });

    it('delete preconditions (uid, resourceVersion); a Service delete returns the Service, a ConfigMap delete a Status', async () => {
      const ns = await server.namespace();
      const svc = await server.api('POST', `/api/v1/namespaces/${ns}/services`, {
        metadata: { name: 'web' },
        spec: { ports: [{ port: 80 }] },
      });
      const { uid, resourceVersion } = svc.body.metadata;
      const path = `/api/v1/namespaces/${ns}/services/web`;
      const badUid = await server.api('DELETE', path, { preconditions: { uid: 'not-the-uid' } });
      expect(badUid.status).toBe(409);
      expect(badUid.body).toMatchObject({
        reason: 'Conflict',
        message: `Operation cannot be fulfilled on Service "web": the UID in the precondition (not-the-uid) does not match the UID in record (${uid}). The object might have been deleted and then recreated`,
      });
      const badRv = await server.api('DELETE', path, { preconditions: { resourceVersion: '1' } });
      expect(badRv.status).toBe(409);
      expect(badRv.body.message).toBe(
        `Operation cannot be fulfilled on Service "web": the ResourceVersion in the precondition (1) does not match the ResourceVersion in record (${resourceVersion}). The object might have been modified`,
      );
      const del = await server.api('DELETE', path, { preconditions: { uid, resourceVersion } });
      expect(del.status, JSON.stringify(del.body)).toBe(200);
      expect(del.body).toMatchObject({ kind: 'Service', apiVersion: 'v1', metadata: { name: 'web', uid } });

      await server.api('POST', `/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'cm' } });
      const cm = await server.api('GET', `/api/v1/namespaces/${ns}/configmaps/cm`);
      const delCm = await server.api('DELETE', `/api/v1/namespaces/${ns}/configmaps/cm`);
      expect(delCm.status).toBe(200);
      expect(delCm.body).toEqual({
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Success',
        details: { name: 'cm', kind: 'configmaps', uid: cm.body.metadata.uid },
      });
      const again = await server.api('DELETE', `/api/v1/namespaces/${ns}/configmaps/cm`);
      expect(again.status).toBe(404);
    });

    it('Leases: PUT needs a resourceVersion, PUT creates a missing one, MicroTime needs six digits', async () => {
      const ns = await server.namespace();
      const path = `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases`;
      const lease = (name: string, extra: Record<string, unknown> = {}) => ({
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name, ...extra },
        spec: { holderIdentity: 'a', leaseDurationSeconds: 15, renewTime: '2026-01-02T03:04:05.123456Z' },
      });
      const millis = await server.api('POST', path, {
        ...lease('millis'),
        spec: { renewTime: '2026-01-02T03:04:05.123Z' },
      });
      expect(millis.status).toBe(400);
      expect(millis.body).toMatchObject({
        reason: 'BadRequest',
        message:
          'Lease in version "v1" cannot be handled as a Lease: parsing time "2026-01-02T03:04:05.123Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse ".123Z" as ".000000"',
      });
      const created = await server.api('PUT', `${path}/by-put`, lease('by-put'));
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      expect(created.body.spec.renewTime).toBe('2026-01-02T03:04:05.123456Z');
      const noRv = await server.api('PUT', `${path}/by-put`, lease('by-put'));
      expect(noRv.status).toBe(422);
      expect(noRv.body).toMatchObject({
        reason: 'Invalid',
        // An update names the resource (leases), a create the kind (Lease), as the registry does.
        message:
          'leases.coordination.k8s.io "by-put" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update',
        details: {
          name: 'by-put',
          group: 'coordination.k8s.io',
          kind: 'leases',
          causes: [
            {
              reason: 'FieldValueInvalid',
              message: 'Invalid value: 0: must be specified for an update',
              field: 'metadata.resourceVersion',
            },
          ],
        },
      });
      const bad = await server.api('POST', path, {
        ...lease('bad'),
        spec: { leaseDurationSeconds: 0, leaseTransitions: -1 },
      });
      expect(bad.status).toBe(422);
      expect(bad.body.details.causes.map((c: { field: string }) => c.field)).toEqual([
        'spec.leaseDurationSeconds',
        'spec.leaseTransitions',
      ]);
      expect(bad.body.message).toBe(
        'Lease.coordination.k8s.io "bad" is invalid: [spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0, spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0]',
      );
    });

    it('Events: core/v1 create and list by involvedObject; events.k8s.io/v1 requires its fields', async () => {
      const ns = await server.namespace();
      const ev = await server.api('POST', `/api/v1/namespaces/${ns}/events`, {
        metadata: { name: 'web.1' },
        involvedObject: { kind: 'Service', namespace: ns, name: 'web', apiVersion: 'v1' },
        reason: 'Projected',
        message: 'projected',
        type: 'Normal',
        source: { component: 'endpoint-binder' },
        firstTimestamp: '2026-01-02T03:04:05Z',
        lastTimestamp: '2026-01-02T03:04:05Z',
        count: 1,
      });
      expect(ev.status, JSON.stringify(ev.body)).toBe(201);
      expect(withoutManagedFields(ev.body)).toMatchObject({
        kind: 'Event',
        apiVersion: 'v1',
        involvedObject: { kind: 'Service', name: 'web' },
        reason: 'Projected',
        source: { component: 'endpoint-binder' },
        count: 1,
        eventTime: null,
        reportingComponent: '',
        reportingInstance: '',
      });
      const listed = await server.api(
        'GET',
        `/api/v1/namespaces/${ns}/events?fieldSelector=involvedObject.kind%3DService,involvedObject.name%3Dweb,reason%3DProjected`,
      );
      expect(listed.status).toBe(200);
      expect(listed.body.items.map((e: { metadata: { name: string } }) => e.metadata.name)).toEqual([
        'web.1',
      ]);

      // events.k8s.io/v1 validates as the core Event of a new-style recorder: without eventTime only
      // that and the type are reported; with it, every reporting field.
      const newEvent = (extra: Record<string, unknown>) =>
        server.api('POST', `/apis/events.k8s.io/v1/namespaces/${ns}/events`, {
          metadata: { name: 'bad' },
          regarding: { kind: 'Service', namespace: ns, name: 'web' },
          note: 'x',
          ...extra,
        });
      const noTime = await newEvent({});
      expect(noTime.status).toBe(422);
      expect(noTime.body).toMatchObject({
        reason: 'Invalid',
        message:
          'Event "bad" is invalid: [eventTime: Required value, type: Invalid value: "": has invalid value: ]',
        details: { name: 'bad', kind: 'Event' },
      });
      expect(noTime.body.details.group).toBeUndefined();
      const timed = await newEvent({ eventTime: '2026-01-02T03:04:05.000000Z', type: 'Normal' });
      expect(timed.status).toBe(422);
      expect(
        timed.body.details.causes.map((c: { field: string; reason: string }) => `${c.field} ${c.reason}`),
      ).toEqual([
        'reportingController FieldValueRequired',
        'reportingController FieldValueInvalid',
        'reportingController FieldValueInvalid',
        'reportingInstance FieldValueRequired',
        'action FieldValueRequired',
        'reason FieldValueRequired',
      ]);
      // One stored Event, two APIs on a real server; two collections in kubesim (documented).
      const viaNew = await server.api('GET', `/apis/events.k8s.io/v1/namespaces/${ns}/events/web.1`);
      if (server.kind === 'kube-apiserver') {
        expect(viaNew.status).toBe(200);
        expect(viaNew.body).toMatchObject({ kind: 'Event', regarding: { name: 'web' }, reason: 'Projected' });
      } else expect(viaNew.status).toBe(404);
    });
  });
}
