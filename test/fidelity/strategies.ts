import { describe, expect, it } from 'vitest';
import type { FidelityServer } from './server.js';

/**
 * The registry strategies: PUT to a missing object, metadata.generation, defaults, and the
 * status subresource (a PodDisruptionBudget: no controller of the shared control plane writes its
 * status, unlike a Deployment's or a Job's).
 */
export function defineStrategies(server: FidelityServer): void {
  describe('registry strategies', () => {
    const merge = { contentType: 'application/merge-patch+json' };

    it('PUT creates a missing Service or Lease, but not a missing ConfigMap or Deployment', async () => {
      const ns = await server.namespace();
      const put = (path: string, body: Record<string, unknown>) => server.api('PUT', path, body);
      const svc = await put(`/api/v1/namespaces/${ns}/services/web`, {
        metadata: { name: 'web' },
        spec: { ports: [{ port: 80 }] },
      });
      expect(svc.status).toBe(201);
      const cm = await put(`/api/v1/namespaces/${ns}/configmaps/cm`, { metadata: { name: 'cm' } });
      expect(cm.status).toBe(404);
      expect(cm.body).toMatchObject({ reason: 'NotFound', message: 'configmaps "cm" not found' });
      const dep = await put(`/apis/apps/v1/namespaces/${ns}/deployments/d`, { metadata: { name: 'd' } });
      expect(dep.status).toBe(404);
      expect(dep.body.message).toBe('deployments.apps "d" not found');
    });

    it('a Deployment: the defaults, generation 1 and +1 on a spec change only', async () => {
      const ns = await server.namespace();
      const path = `/apis/apps/v1/namespaces/${ns}/deployments`;
      const created = await server.api('POST', path, {
        metadata: { name: 'd' },
        spec: {
          selector: { matchLabels: { app: 'd' } },
          template: {
            metadata: { labels: { app: 'd' } },
            spec: { containers: [{ name: 'c', image: 'example.invalid/c:1' }] },
          },
        },
      });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      expect(created.body.metadata.generation).toBe(1);
      const { template: _t, ...spec } = created.body.spec;
      expect(spec).toEqual({
        replicas: 1,
        selector: { matchLabels: { app: 'd' } },
        strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' } },
        revisionHistoryLimit: 10,
        progressDeadlineSeconds: 600,
      });
      const labelled = await server.api('PATCH', `${path}/d`, { metadata: { labels: { x: 'y' } } }, merge);
      expect(labelled.body.metadata.generation).toBe(1);
      const scaled = await server.api('PATCH', `${path}/d`, { spec: { replicas: 0 } }, merge);
      expect(scaled.body.metadata.generation).toBe(2);
      const moved = await server.api(
        'PATCH',
        `${path}/d`,
        { spec: { selector: { matchLabels: { app: 'other' } } } },
        merge,
      );
      expect(moved.status).toBe(422);
      expect(moved.body.details.causes.map((c: { field: string }) => c.field)).toContain('spec.selector');
    });

    it('a status subresource: a write there changes only status, a write to the object keeps it', async () => {
      const ns = await server.namespace();
      const path = `/apis/policy/v1/namespaces/${ns}/poddisruptionbudgets`;
      const created = await server.api('POST', path, {
        metadata: { name: 'pdb' },
        spec: { minAvailable: 1, selector: { matchLabels: { app: 'x' } } },
        status: { currentHealthy: 9 },
      });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      expect(created.body.metadata.generation).toBe(1);
      // A create drops the status it was sent.
      expect(created.body.status?.currentHealthy ?? 0).toBe(0);
      const status = await server.api('PUT', `${path}/pdb/status`, {
        ...created.body,
        spec: { ...created.body.spec, minAvailable: 5 },
        status: {
          ...created.body.status,
          currentHealthy: 3,
          desiredHealthy: 1,
          disruptionsAllowed: 2,
          expectedPods: 3,
        },
      });
      expect(status.status, JSON.stringify(status.body)).toBe(200);
      expect(status.body.spec.minAvailable).toBe(1);
      expect(status.body.status).toMatchObject({ currentHealthy: 3, disruptionsAllowed: 2 });
      expect(status.body.metadata.generation).toBe(1);
      const spec = await server.api(
        'PATCH',
        `${path}/pdb`,
        { spec: { minAvailable: 2 }, status: { currentHealthy: 0 } },
        merge,
      );
      expect(spec.body.spec.minAvailable).toBe(2);
      expect(spec.body.status.currentHealthy).toBe(3);
      expect(spec.body.metadata.generation).toBe(2);
    });
  });
}
