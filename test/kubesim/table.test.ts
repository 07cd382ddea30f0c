import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import type { Kubesim } from '../../src/kubesim/index.js';
import { humanDuration } from '../../src/kubesim/table/duration.js';
import { tableVersion } from '../../src/kubesim/table/table.js';
import { api, createNs, svc, useSim, type Loose } from './helpers.js';
import { budget } from '../helpers/budget.js';

const start = useSim();

/** What kubectl 1.32 sends for `kubectl get`. */
const KUBECTL_ACCEPT =
  'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';

async function getTable(
  sim: Kubesim,
  path: string,
  accept = KUBECTL_ACCEPT,
): Promise<{ status: number; contentType: string | null; body: Loose }> {
  const res = await fetch(sim.url + path, {
    headers: { Authorization: `Bearer ${sim.adminToken}`, Accept: accept },
  });
  return { status: res.status, contentType: res.headers.get('content-type'), body: await res.json() };
}

async function post(sim: Kubesim, path: string, body: unknown): Promise<Loose> {
  const r = await api(sim, 'POST', path, body);
  if (r.status !== 201) throw new Error(`POST ${path}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

const columns = (t: Loose) => t.columnDefinitions.map((c: Loose) => c.name);
const rowsByName = (t: Loose): Record<string, unknown[]> =>
  Object.fromEntries(t.rows.map((r: Loose) => [r.cells[0], r.cells]));

describe('Table negotiation and durations (pure)', () => {
  it('picks the first acceptable clause in the Accept header', () => {
    expect(tableVersion(KUBECTL_ACCEPT)).toBe('v1');
    expect(tableVersion('application/json;as=Table;v=v1beta1;g=meta.k8s.io, application/json')).toBe(
      'v1beta1',
    );
    expect(tableVersion('application/json')).toBeUndefined();
    expect(tableVersion(undefined)).toBeUndefined();
    expect(tableVersion('application/json, application/json;as=Table;v=v1;g=meta.k8s.io')).toBeUndefined();
    // Kinds of output kubesim cannot produce are skipped, as a server skips what it does not serve.
    expect(
      tableVersion(
        'application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1;g=meta.k8s.io',
      ),
    ).toBe('v1');
    expect(tableVersion('application/json;as=Table;v=v2;g=meta.k8s.io')).toBeUndefined();
  });

  it('renders ages like duration.HumanDuration', () => {
    const s = 1000;
    expect(humanDuration(-5 * s)).toBe('<invalid>');
    expect(humanDuration(-1.5 * s)).toBe('0s');
    expect(humanDuration(0)).toBe('0s');
    expect(humanDuration(119 * s)).toBe('119s');
    expect(humanDuration(120 * s)).toBe('2m');
    expect(humanDuration(192 * s)).toBe('3m12s');
    expect(humanDuration(45 * 60 * s)).toBe('45m');
    expect(humanDuration(3 * 3600 * s)).toBe('3h');
    expect(humanDuration((3 * 3600 + 25 * 60) * s)).toBe('3h25m');
    expect(humanDuration(30 * 3600 * s)).toBe('30h');
    expect(humanDuration((2 * 24 + 4) * 3600 * s)).toBe('2d4h');
    expect(humanDuration(10 * 24 * 3600 * s)).toBe('10d');
    expect(humanDuration((3 * 365 + 12) * 24 * 3600 * s)).toBe('3y12d');
    expect(humanDuration(9 * 365 * 24 * 3600 * s)).toBe('9y');
  });
});

describe('kubesim server-side printing (meta.k8s.io Table)', () => {
  it('prints Services with the real columns and cells for every type', async () => {
    const sim = await start();
    await createNs(sim, 'other');
    const S = '/api/v1/namespaces/default/services';
    await post(
      sim,
      S,
      svc('plain', { selector: { b: '2', a: '1' } }, { 'endpoint-binder.io/state': 'projected' }),
    );
    await post(sim, S, svc('np', { type: 'NodePort', ports: [{ port: 80, nodePort: 30080 }] }));
    await post(sim, S, svc('ext', { type: 'ExternalName', externalName: 'example.com', ports: [] }));
    await post(
      sim,
      S,
      svc('lb', { type: 'LoadBalancer', ports: [{ port: 443, protocol: 'TCP', nodePort: 30443 }] }),
    );
    await post(sim, S, svc('headless', { clusterIP: 'None', ports: [] }));
    await post(
      sim,
      '/api/v1/namespaces/other/services',
      svc('two', {
        externalIPs: ['1.2.3.4'],
        ports: [
          { name: 'a', port: 80 },
          { name: 'b', port: 53, protocol: 'UDP' },
        ],
      }),
    );

    const res = await getTable(sim, '/api/v1/services');
    expect(res.status).toBe(200);
    expect(res.contentType).toBe('application/json;as=Table;v=v1;g=meta.k8s.io');
    const t = res.body;
    expect(t.kind).toBe('Table');
    expect(t.apiVersion).toBe('meta.k8s.io/v1');
    expect(t.metadata.resourceVersion).toMatch(/^\d+$/);
    expect(columns(t)).toEqual(['Name', 'Type', 'Cluster-IP', 'External-IP', 'Port(s)', 'Age', 'Selector']);
    expect(t.columnDefinitions.map((c: Loose) => c.priority)).toEqual([0, 0, 0, 0, 0, 0, 1]);
    expect(t.columnDefinitions[0]).toMatchObject({ type: 'string', format: 'name' });

    const rows = rowsByName(t);
    const ip = /^10\.\d+\.\d+\.\d+$/;
    expect(rows.plain).toEqual([
      'plain',
      'ClusterIP',
      expect.stringMatching(ip),
      '<none>',
      '80/TCP',
      expect.stringMatching(/^\d+s$/),
      'a=1,b=2',
    ]);
    expect(rows.np!.slice(1, 5)).toEqual(['NodePort', expect.stringMatching(ip), '<none>', '80:30080/TCP']);
    expect(rows.ext!.slice(1, 5)).toEqual(['ExternalName', '<none>', 'example.com', '<none>']);
    expect(rows.lb!.slice(1, 5)).toEqual([
      'LoadBalancer',
      expect.stringMatching(ip),
      '<pending>',
      '443:30443/TCP',
    ]);
    expect(rows.headless!.slice(1, 5)).toEqual(['ClusterIP', 'None', '<none>', '<none>']);
    expect(rows.two!.slice(1, 5)).toEqual([
      'ClusterIP',
      expect.stringMatching(ip),
      '1.2.3.4',
      '80/TCP,53/UDP',
    ]);
    expect(rows.two![6]).toBe('<none>');
  });

  it('includes object metadata by default, the object or nothing on request', async () => {
    const sim = await start();
    await post(
      sim,
      '/api/v1/namespaces/default/services',
      svc('web', {}, { 'endpoint-binder.io/state': 'projected' }),
    );
    const L = '/api/v1/namespaces/default/services';

    const meta = (await getTable(sim, L)).body.rows[0].object;
    expect(meta.kind).toBe('PartialObjectMetadata');
    expect(meta.apiVersion).toBe('meta.k8s.io/v1');
    expect(meta.metadata).toMatchObject({
      name: 'web',
      namespace: 'default',
      labels: { 'endpoint-binder.io/state': 'projected' },
    });
    expect(meta.spec).toBeUndefined();

    const full = (await getTable(sim, `${L}?includeObject=Object`)).body.rows[0].object;
    expect(full).toMatchObject({
      kind: 'Service',
      apiVersion: 'v1',
      metadata: { name: 'web' },
      spec: { type: 'ClusterIP' },
    });

    expect((await getTable(sim, `${L}?includeObject=None`)).body.rows[0].object).toBeNull();

    const bad = await getTable(sim, `${L}?includeObject=Everything`);
    expect(bad.status).toBe(400);
    expect(bad.body.message).toBe(
      `Unable to convert to Table as requested: includeObject: Invalid value: "Everything": must be 'Metadata', 'Object', 'None', or empty`,
    );

    const beta = await getTable(sim, L, 'application/json;as=Table;v=v1beta1;g=meta.k8s.io');
    expect(beta.body.apiVersion).toBe('meta.k8s.io/v1beta1');
    expect(beta.body.rows[0].object.apiVersion).toBe('meta.k8s.io/v1beta1');
  });

  it('keeps plain JSON for clients that do not ask for a Table, and paginates Tables', async () => {
    const sim = await start();
    const L = '/api/v1/namespaces/default/services';
    await post(sim, L, svc('a'));
    await post(sim, L, svc('b'));
    const plain = await getTable(sim, L, 'application/json');
    expect(plain.contentType).toBe('application/json');
    expect(plain.body.kind).toBe('ServiceList');

    const page = (await getTable(sim, `${L}?limit=1`)).body;
    expect(page.rows.map((r: Loose) => r.cells[0])).toEqual(['a']);
    expect(page.metadata.continue).toBeTruthy();
    expect(page.metadata.remainingItemCount).toBe(1);
    const next = (await getTable(sim, `${L}?limit=1&continue=${encodeURIComponent(page.metadata.continue)}`))
      .body;
    expect(next.rows.map((r: Loose) => r.cells[0])).toEqual(['b']);
  });

  it('prints a single object as a one-row Table', async () => {
    const sim = await start();
    const created = await post(sim, '/api/v1/namespaces/default/services', svc('one'));
    const t = (await getTable(sim, '/api/v1/namespaces/default/services/one')).body;
    expect(t.kind).toBe('Table');
    expect(t.metadata.resourceVersion).toBe(created.metadata.resourceVersion);
    expect(t.rows).toHaveLength(1);
    expect(t.rows[0].cells[0]).toBe('one');
    const missing = await getTable(sim, '/api/v1/namespaces/default/services/nope');
    expect(missing.status).toBe(404);
    expect(missing.body.kind).toBe('Status');
  });

  it('prints Namespaces, Leases and Events with their own columns', async () => {
    const sim = await start();
    const ns = (await getTable(sim, '/api/v1/namespaces')).body;
    expect(columns(ns)).toEqual(['Name', 'Status', 'Age']);
    expect(rowsByName(ns).default!.slice(0, 2)).toEqual(['default', 'Active']);

    await post(sim, '/apis/coordination.k8s.io/v1/namespaces/default/leases', {
      metadata: { name: 'leader' },
      spec: { holderIdentity: 'pod-a', leaseDurationSeconds: 15 },
    });
    await post(sim, '/apis/coordination.k8s.io/v1/namespaces/default/leases', {
      metadata: { name: 'free' },
      spec: {},
    });
    const leases = (await getTable(sim, '/apis/coordination.k8s.io/v1/namespaces/default/leases')).body;
    expect(columns(leases)).toEqual(['Name', 'Holder', 'Age']);
    expect(rowsByName(leases).leader!.slice(0, 2)).toEqual(['leader', 'pod-a']);
    expect(rowsByName(leases).free!.slice(0, 2)).toEqual(['free', '']);

    const hour = new Date(Date.now() - 3600_000).toISOString().replace(/\.\d+Z$/, 'Z');
    const fiveMin = new Date(Date.now() - 300_000).toISOString().replace(/\.\d+Z$/, 'Z');
    await post(sim, '/api/v1/namespaces/default/events', {
      metadata: { name: 'web.1' },
      involvedObject: { kind: 'Service', name: 'web', namespace: 'default', fieldPath: 'spec.ports' },
      reason: 'Projected',
      message: ' bound to 3 endpoints ',
      type: 'Normal',
      source: { component: 'endpoint-binder', host: 'node-1' },
      firstTimestamp: hour,
      lastTimestamp: fiveMin,
      count: 4,
    });
    const events = (await getTable(sim, '/api/v1/namespaces/default/events')).body;
    expect(columns(events)).toEqual([
      'Last Seen',
      'Type',
      'Reason',
      'Object',
      'Subobject',
      'Source',
      'Message',
      'First Seen',
      'Count',
      'Name',
    ]);
    expect(events.rows[0].cells).toEqual([
      expect.stringMatching(/^[5-9]m(\d+s)?$/),
      'Normal',
      'Projected',
      'service/web',
      'spec.ports',
      'endpoint-binder, node-1',
      'bound to 3 endpoints',
      expect.stringMatching(/^6\dm$/),
      4,
      'web.1',
    ]);

    await post(sim, '/apis/events.k8s.io/v1/namespaces/default/events', {
      metadata: { name: 'web.2' },
      eventTime: new Date().toISOString().replace('Z', '000Z'),
      regarding: { kind: 'Service', name: 'web', namespace: 'default' },
      reason: 'Conflict',
      note: 'port taken',
      type: 'Warning',
      action: 'Project',
      reportingController: 'endpoint-binder',
      reportingInstance: 'pod-a',
    });
    const v1events = (await getTable(sim, '/apis/events.k8s.io/v1/namespaces/default/events')).body;
    const cells = v1events.rows[0].cells;
    expect(cells.slice(1, 4)).toEqual(['Warning', 'Conflict', 'service/web']);
    expect(cells.slice(5, 7)).toEqual(['endpoint-binder, pod-a', 'port taken']);
    expect(cells[8]).toBe(1); // singleton events count once
    expect(cells[0]).toBe(cells[7]); // no lastTimestamp: last seen = first seen (eventTime)
  });

  it('streams watch events as one-row Tables, with column definitions on the first only', async () => {
    const sim = await start();
    const L = '/api/v1/namespaces/default/services';
    await post(sim, L, svc('first'));
    const events: Loose[] = [];
    const url = new URL(`${sim.url}${L}?watch=true`);
    const req = request(url, {
      headers: { Authorization: `Bearer ${sim.adminToken}`, Accept: KUBECTL_ACCEPT },
    });
    const done = new Promise<void>((resolve, reject) => {
      req.on('response', (res) => {
        let buf = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          buf += chunk;
          let i: number;
          while ((i = buf.indexOf('\n')) >= 0) {
            events.push(JSON.parse(buf.slice(0, i)));
            buf = buf.slice(i + 1);
          }
          if (events.length >= 2) resolve();
        });
      });
      req.on('error', reject);
      setTimeout(() => reject(new Error(`got ${events.length} events`)), budget(10_000));
    });
    req.end();
    try {
      // The initial ADDED arrives first; a create after it is the second event.
      for (let i = 0; i < 100 && events.length === 0; i++) await new Promise((r) => setTimeout(r, 50));
      await post(sim, L, svc('second'));
      await done;
    } finally {
      req.destroy();
    }
    expect(events.map((e) => e.type)).toEqual(['ADDED', 'ADDED']);
    expect(events[0].object.kind).toBe('Table');
    expect(columns(events[0].object)).toContain('Cluster-IP');
    expect(events[0].object.rows[0].cells[0]).toBe('first');
    expect(events[1].object.columnDefinitions).toBeUndefined();
    expect(events[1].object.rows[0].cells[0]).toBe('second');
    expect(events[1].object.rows[0].object.kind).toBe('PartialObjectMetadata');
  });
});
