import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startKubesim, type Kubesim } from '../../src/kubesim/index.js';
import { api } from './helpers.js';

/**
 * #19 item 7: the Event field selectors the docs tell users to run (docs/install.md
 * `--field-selector reportingComponent=endpoint-binder`, docs/kubesim.md `involvedObject.*`) are
 * served over the plain API, as a real API server serves them; other fields are refused the same way.
 */

let sim: Kubesim;
beforeAll(async () => {
  sim = await startKubesim({ initialNamespaces: ['default', 'ops', 'prod'] });
  const event = (ns: string, name: string, kind: string, component: string | undefined) => ({
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name, namespace: ns },
    involvedObject: { kind, name: 'web', namespace: ns, apiVersion: 'v1', uid: `uid-${name}` },
    reason: 'Projected',
    type: 'Normal',
    message: 'm',
    ...(component ? { reportingComponent: component, reportingInstance: 'pod-a' } : {}),
  });
  for (const e of [
    event('ops', 'ours', 'Service', 'endpoint-binder'),
    event('prod', 'ours-too', 'Service', 'endpoint-binder'),
    event('prod', 'kubelet', 'Pod', 'kubelet'),
    event('prod', 'none', 'Service', undefined),
  ]) {
    const r = await api(sim, 'POST', `/api/v1/namespaces/${e.metadata.namespace}/events`, e);
    expect(r.status, JSON.stringify(r.body)).toBe(201);
  }
});
afterAll(async () => {
  await sim?.stop();
});

async function names(path: string, selector: string): Promise<string[]> {
  const r = await api(sim, 'GET', `${path}?fieldSelector=${encodeURIComponent(selector)}`);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return (r.body as { items: { metadata: { name: string } }[] }).items.map((i) => i.metadata.name).sort();
}

describe('kubesim: Event field selectors', () => {
  it('reportingComponent across all namespaces (kubectl get events -A --field-selector reportingComponent=endpoint-binder)', async () => {
    expect(await names('/api/v1/events', 'reportingComponent=endpoint-binder')).toEqual(['ours', 'ours-too']);
    expect(await names('/api/v1/events', 'reportingComponent!=endpoint-binder')).toEqual(['kubelet', 'none']);
  });

  it('involvedObject.* in a namespace, combined with other fields', async () => {
    expect(await names('/api/v1/namespaces/prod/events', 'involvedObject.kind=Service')).toEqual([
      'none',
      'ours-too',
    ]);
    expect(
      await names(
        '/api/v1/namespaces/prod/events',
        'involvedObject.kind=Service,involvedObject.name=web,involvedObject.uid=uid-ours-too',
      ),
    ).toEqual(['ours-too']);
    // `source` falls back to reportingComponent, as the API server's selectable fields do.
    expect(await names('/api/v1/events', 'source=endpoint-binder')).toEqual(['ours', 'ours-too']);
  });

  it('refuses a field the server cannot select on', async () => {
    const r = await api(sim, 'GET', `/api/v1/events?fieldSelector=${encodeURIComponent('message=m')}`);
    expect(r.status).toBe(400);
    expect(JSON.stringify(r.body)).toContain('field label not supported: message');
  });
});
