import { describe, expect, it } from 'vitest';
import { api, createNs, createSvc, openWatch, svc, useSim } from './helpers.js';
import { conditionOf, pollUntil } from '../helpers/wait.js';

const start = useSim();

async function until<T>(fn: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 10_000): Promise<T> {
  return pollUntil(conditionOf(ok), fn, ok, { timeoutMs, intervalMs: 10, onError: 'throw' });
}

describe('kubesim namespaces', () => {
  it('a deleted namespace goes Terminating, forbids new content, then vanishes with its content', async () => {
    // Long enough for the checks made while Terminating, even on a loaded machine.
    const sim = await start({ namespaceFinalizeDelayMs: 1500 });
    await createNs(sim, 'doomed');
    const s = await createSvc(sim, 'doomed', 'web');
    await api(sim, 'POST', '/apis/coordination.k8s.io/v1/namespaces/doomed/leases', {
      metadata: { name: 'l' },
    });
    const svcWatch = await openWatch(
      sim,
      `/api/v1/services?watch=true&resourceVersion=${s.metadata.resourceVersion}`,
    );
    const nsWatch = await openWatch(
      sim,
      `/api/v1/namespaces?watch=true&fieldSelector=metadata.name%3Ddoomed`,
    );
    await nsWatch.waitFor((e) => e.length === 1);

    const del = await api(sim, 'DELETE', '/api/v1/namespaces/doomed');
    expect(del.status).toBe(200);
    expect(del.body.kind).toBe('Namespace');
    expect(del.body.status.phase).toBe('Terminating');
    expect(del.body.metadata.deletionTimestamp).toBeTruthy();

    const blocked = await api(sim, 'POST', '/api/v1/namespaces/doomed/services', svc('new'));
    expect(blocked.status).toBe(403);
    expect(blocked.body).toMatchObject({
      reason: 'Forbidden',
      message:
        'services "new" is forbidden: unable to create new content in namespace doomed because it is being terminated',
      details: {
        name: 'new',
        kind: 'services',
        causes: [
          {
            reason: 'NamespaceTerminating',
            message: 'namespace doomed is being terminated',
            field: 'metadata.namespace',
          },
        ],
      },
    });
    // A second delete answers the Terminating namespace unchanged (the registry's Delete).
    const again = await api(sim, 'DELETE', '/api/v1/namespaces/doomed');
    expect(again.status).toBe(200);
    expect(again.body.status.phase).toBe('Terminating');

    await until(
      () => api(sim, 'GET', '/api/v1/namespaces/doomed'),
      (r) => r.status === 404,
    );
    expect((await api(sim, 'GET', '/api/v1/namespaces/doomed/services/web')).status).toBe(404);
    expect((await api(sim, 'GET', '/apis/coordination.k8s.io/v1/namespaces/doomed/leases/l')).status).toBe(
      404,
    );
    await svcWatch.waitFor((e) => e.some((x) => x.type === 'DELETED'));
    expect(svcWatch.events.map((e) => `${e.type} ${e.object.metadata.name}`)).toEqual(['DELETED web']);
    await nsWatch.waitFor((e) => e.length === 3);
    expect(nsWatch.events.map((e) => e.type)).toEqual(['ADDED', 'MODIFIED', 'DELETED']);
    svcWatch.close();
    nsWatch.close();

    // The name can be reused once it is gone, and the released cluster IP is free again.
    await createNs(sim, 'doomed');
    expect(
      (
        await api(
          sim,
          'POST',
          '/api/v1/namespaces/doomed/services',
          svc('web', { clusterIP: s.spec.clusterIP }),
        )
      ).status,
    ).toBe(201);
  });

  it('namespace names are DNS-1123 labels; default/kube-system cannot be deleted', async () => {
    const sim = await start();
    const bad = await api(sim, 'POST', '/api/v1/namespaces', { metadata: { name: 'Bad.Name' } });
    expect(bad.status).toBe(422);
    expect(bad.body.details.kind).toBe('Namespace');
    const dflt = await api(sim, 'DELETE', '/api/v1/namespaces/default');
    expect(dflt.status).toBe(403);
    expect(dflt.body.message).toBe('namespaces "default" is forbidden: this namespace may not be deleted');
    const dup = await api(sim, 'POST', '/api/v1/namespaces', { metadata: { name: 'kube-system' } });
    expect(dup.status).toBe(409);
  });

  it('initialNamespaces is configurable', async () => {
    const sim = await start({ initialNamespaces: ['a', 'b', 'c'] });
    const r = await api(sim, 'GET', '/api/v1/namespaces');
    expect(r.body.items.map((i: { metadata: { name: string } }) => i.metadata.name)).toEqual(['a', 'b', 'c']);
  });
});
