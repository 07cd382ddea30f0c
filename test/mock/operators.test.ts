import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collect } from '../../src/api/client/index.js';
import { startTestMock, type TestMock } from '../helpers/mock-api.js';

let m: TestMock;
beforeAll(async () => {
  m = await startTestMock();
});
afterAll(async () => {
  await m.close();
});

const deployment = { name: 'endpoint-binder', namespace: 'binder-system', version: '0.1.0' };

describe('kubernetes operators', () => {
  it('registers, gets, lists, updates and deletes an operator through the typed client', async () => {
    const op = await m.client.kubernetesOperators.create({
      description: 'prod cluster',
      metadata: '{"cluster":"prod"}',
      enabled_features: ['Bindings'],
      deployment,
      binding: { endpoint_selector: 'endpoint.namespace == "prod"' },
    });
    expect(op.id).toMatch(/^k8sop_[0-9a-z]{26}$/);
    expect(op).toMatchObject({
      uri: `${m.url}/kubernetes_operators/${op.id}`,
      description: 'prod cluster',
      metadata: '{"cluster":"prod"}',
      enabled_features: ['bindings'],
      deployment,
      binding: { endpoint_selector: 'endpoint.namespace == "prod"', ingress_endpoint: null },
    });
    expect(await m.client.kubernetesOperators.get(op.id)).toEqual(op);
    expect((await collect(m.client.kubernetesOperators.list())).map((o) => o.id)).toContain(op.id);

    const updated = await m.client.kubernetesOperators.update(op.id, {
      deployment: { version: '0.2.0' },
      binding: { endpoint_selector: 'true' },
    });
    expect(updated).toMatchObject({
      deployment: { ...deployment, version: '0.2.0' },
      binding: { endpoint_selector: 'true' },
      description: 'prod cluster',
    });

    await m.client.kubernetesOperators.delete(op.id);
    const gone = await m.raw('GET', `/kubernetes_operators/${op.id}`);
    expect([gone.status, gone.json.error_code]).toEqual([404, 'ERR_150']);
    expect((await m.raw('GET', `/kubernetes_operators/${op.id}/bound_endpoints`)).status).toBe(404);
  });

  it('returns the binding ingress address once the ingress listens', async () => {
    const op = await m.client.kubernetesOperators.create({ deployment: { name: 'b', namespace: 'c' } });
    expect(op.binding).toEqual({ endpoint_selector: 'true', ingress_endpoint: null });
    expect(op.enabled_features).toEqual([]);
    expect(op.deployment.version).toBe('');
    m.api.services.ingressAddress = '127.0.0.1:4443';
    try {
      expect((await m.client.kubernetesOperators.get(op.id)).binding.ingress_endpoint).toBe('127.0.0.1:4443');
    } finally {
      m.api.services.ingressAddress = undefined;
    }
  });

  it('validates the registration', async () => {
    const cases: [unknown, string][] = [
      [{}, 'ERR_122'],
      [{ deployment: { name: 'x' } }, 'ERR_122'],
      [{ deployment: { ...deployment, name: 'Bad_Name' } }, 'ERR_601'],
      [{ deployment: { ...deployment, namespace: 'a'.repeat(64) } }, 'ERR_601'],
      [{ deployment, enabled_features: ['ingress'] }, 'ERR_600'],
      [{ deployment, binding: { endpoint_selectors: ['true'] } }, 'ERR_120'],
      [{ deployment, binding: { endpoint_selector: 'x'.repeat(4097) } }, 'ERR_603'],
      [{ deployment, region: 'eu' }, 'ERR_120'],
      [{ deployment, description: 'é'.repeat(128) }, 'ERR_124'],
    ];
    for (const [body, code] of cases) {
      const res = await m.raw('POST', '/kubernetes_operators', { body });
      expect([res.status, res.json.error_code], JSON.stringify(body).slice(0, 80)).toEqual([400, code]);
    }
  });

  it('validates updates: namespace is fixed, empty updates are refused', async () => {
    const op = await m.client.kubernetesOperators.create({ deployment });
    const ns = await m.raw('PATCH', `/kubernetes_operators/${op.id}`, {
      body: { deployment: { namespace: 'other' } },
    });
    expect([ns.status, ns.json.error_code]).toEqual([400, 'ERR_602']);
    for (const body of [{}, { deployment: {} }, { binding: {} }]) {
      const res = await m.raw('PATCH', `/kubernetes_operators/${op.id}`, { body });
      expect([res.status, res.json.error_code], JSON.stringify(body)).toEqual([400, 'ERR_123']);
    }
    expect(await m.client.kubernetesOperators.get(op.id)).toEqual(op);
  });

  it('keeps operators per account', async () => {
    const op = await m.client.kubernetesOperators.create({ deployment });
    const other = await m.raw('GET', `/kubernetes_operators/${op.id}`, { apiKey: m.otherKey });
    expect(other.status).toBe(404);
    expect((await collect(m.otherClient.kubernetesOperators.list())).map((o) => o.id)).not.toContain(op.id);
  });
});

describe('bound endpoints', () => {
  it('pages every cluster-bound endpoint of the account, newest first, over more than 100', async () => {
    const acct = await startTestMock();
    try {
      const op = await acct.client.kubernetesOperators.create({ deployment });
      const ids: string[] = [];
      for (let i = 0; i < 105; i++) {
        const ep = await acct.client.endpoints.create({
          url: `tcp://svc${i}.ns:${1000 + i}`,
          bindings: ['kubernetes'],
        });
        ids.push(ep.id);
      }
      await acct.otherClient.endpoints.create({ url: 'http://other.account', bindings: ['kubernetes'] });

      const first = await acct.raw('GET', `/kubernetes_operators/${op.id}/bound_endpoints`);
      expect(first.status).toBe(200);
      expect(first.json.endpoints).toHaveLength(100);
      expect(first.json.uri).toBe(`${acct.url}/kubernetes_operators/${op.id}/bound_endpoints`);
      expect(first.json.next_page_uri).toMatch(
        new RegExp(`^${acct.url}/kubernetes_operators/${op.id}/bound_endpoints\\?limit=100&before_id=ep_`),
      );
      const second = await acct.raw('GET', first.json.next_page_uri.slice(acct.url.length));
      expect(second.json.endpoints).toHaveLength(5);
      expect(second.json.next_page_uri).toBeNull();

      const all = await collect(acct.client.kubernetesOperators.boundEndpoints(op.id));
      expect(all.map((e) => e.id)).toEqual([...ids].reverse());
      expect(all[0]).toMatchObject({
        proto: 'tcp',
        public_url: 'tcp://svc104.ns:1104',
        bindings: ['kubernetes'],
      });

      // Lazy: nothing is fetched until iterated; a small page size walks the same list.
      const small = await collect(acct.client.kubernetesOperators.boundEndpoints(op.id, { limit: 7 }));
      expect(small.map((e) => e.id)).toEqual([...ids].reverse());
    } finally {
      await acct.close();
    }
  });
});
