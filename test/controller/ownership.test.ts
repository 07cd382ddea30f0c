import { budget } from '../helpers/budget.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Controller } from '../../src/controller/controller.js';
import { uninstall } from '../../src/controller/uninstall.js';
import { kinds } from '../../src/kube/index.js';
import { silentLogger } from '../../src/log/logger.js';
import { OPERATOR_NS, eventually, startEnv, type ControllerEnv } from './env.js';

const OURS = {
  'app.kubernetes.io/managed-by': 'endpoint-binder',
  'app.kubernetes.io/instance': 'endpoint-binder',
  'endpoint-binder.io/operator-namespace': OPERATOR_NS,
  'endpoint-binder.io/role': 'alias',
};

/** Patch rights must not become delete rights: our labels on someone else's Service. */
describe('controller: ownership is anchored where tenants cannot write', () => {
  let env: ControllerEnv;
  let ctl: Controller;

  beforeAll(async () => {
    env = await startEnv({ namespaces: ['prod'] });
    ctl = await env.startController({});
    await eventually(() => ctl.isReady(), 'controller ready');
  });
  afterAll(async () => {
    await env?.close();
  });

  it('labels added to kube-system/kube-dns and a tenant Service: the controller never deletes or changes them', async () => {
    const dns = await env.kube.create(kinds.service, {
      metadata: { name: 'kube-dns', namespace: 'kube-system' },
      spec: { type: 'ClusterIP', ports: [{ port: 53, protocol: 'UDP' }] },
    });
    const tenant = await env.kube.create(kinds.service, {
      metadata: { name: 'shop', namespace: 'prod', labels: { team: 'shop' } },
      spec: { type: 'ClusterIP', ports: [{ port: 80, protocol: 'TCP' }] },
    });
    // Someone allowed to patch (not delete) Services adds our ownership labels to both.
    const patched = [
      await env.kube.mergePatch(kinds.service, 'kube-system', 'kube-dns', { metadata: { labels: OURS } }),
      await env.kube.mergePatch(kinds.service, 'prod', 'shop', { metadata: { labels: OURS } }),
    ];
    // Passes run after the patch: a new endpoint is projected (so the caches saw the labels).
    const ep = await env.createEndpoint('http://after.prod');
    await eventually(() => env.service('prod', 'after'), 'a later alias');
    await eventually(
      () => ctl.status().endpoints.find((e) => e.id === ep.id)?.state === 'projected' || undefined,
      'projected',
    );
    for (const p of patched) {
      const live = await env.service(p.metadata.namespace!, p.metadata.name);
      expect(live?.metadata.uid, `${p.metadata.namespace}/${p.metadata.name}`).toBe(p.metadata.uid);
      expect(live?.metadata.resourceVersion).toBe(p.metadata.resourceVersion);
      expect(live?.spec?.type).toBe('ClusterIP');
    }
    expect(dns.metadata.uid).toBe(patched[0]!.metadata.uid);
    expect(tenant.metadata.uid).toBe(patched[1]!.metadata.uid);
  });

  it('a tenant Service at the name an endpoint wants, our labels patched on: never taken over (item 3(b))', async () => {
    // An independent watch (not the controller's) counts every write to the tenant's Service.
    let writes = 0;
    const isShop = (s: { metadata: { namespace?: string | undefined; name: string } }) =>
      s.metadata.namespace === 'prod' && s.metadata.name === 'cart';
    const off = [
      env.writes.cache.on('update', (_old, now) => isShop(now) && writes++),
      env.writes.cache.on('delete', (s) => isShop(s) && writes++),
    ];
    try {
      await env.kube.create(kinds.service, {
        metadata: { name: 'cart', namespace: 'prod', labels: { team: 'cart' } },
        spec: { type: 'ClusterIP', ports: [{ port: 80, protocol: 'TCP' }] },
      });
      const patched = await env.kube.mergePatch(kinds.service, 'prod', 'cart', {
        metadata: { labels: OURS },
      });
      await eventually(
        () => env.writes.cache.get('prod', 'cart')?.metadata.labels?.['endpoint-binder.io/role'],
        'patch seen',
      );
      writes = 0;
      // An endpoint wants exactly that name: its internal Service names prod/cart, but records no
      // uid of an alias this install created there, so the tenant's Service stays theirs.
      const ep = await env.createEndpoint('http://cart.prod');
      const internal = await eventually(() => env.internalOf(ep.id), 'internal Service');
      expect(internal.metadata.annotations?.['endpoint-binder.io/alias']).toBeUndefined();
      await eventually(
        () => ctl.status().endpoints.find((e) => e.id === ep.id)?.state === 'name-conflict' || undefined,
        'name-conflict',
      );
      // More passes: another endpoint is projected after it.
      await env.createEndpoint('http://later.prod');
      await eventually(() => env.service('prod', 'later'), 'a later alias');
      const live = await env.service('prod', 'cart');
      expect(live?.metadata.uid).toBe(patched.metadata.uid);
      expect(live?.metadata.resourceVersion).toBe(patched.metadata.resourceVersion);
      expect(live?.spec?.type).toBe('ClusterIP');
      expect(writes).toBe(0);
      expect(ctl.status().endpoints.find((e) => e.id === ep.id)?.state).toBe('name-conflict');
    } finally {
      for (const f of off) f();
    }
  });

  it(
    'uninstall (policy delete) removes our Services and leaves the labelled tenant Services alone',
    async () => {
      const report = await uninstall({
        kube: env.kube,
        api: undefined,
        identity: { release: 'endpoint-binder', operatorNamespace: OPERATOR_NS },
        policy: 'delete',
        log: silentLogger(),
        renewDeadlineMs: 1_500,
        holdSeconds: 2,
      });
      expect(report.deleted).toContain('prod/after');
      expect(report.deleted).not.toContain('prod/shop');
      expect(report.deleted).not.toContain('kube-system/kube-dns');
      expect(await env.service('prod', 'shop')).toBeDefined();
      expect(await env.service('kube-system', 'kube-dns')).toBeDefined();
    },
    budget(30_000),
  );
});
