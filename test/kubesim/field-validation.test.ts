import { describe, expect, it } from 'vitest';
import { api, createSvc, svc, useSim, type Loose } from './helpers.js';

/**
 * Server-side field validation (`?fieldValidation=Strict|Warn|Ignore`, default Warn) on create,
 * update and patch, driven by the per-kind schemas in src/kubesim/resources/*-schema.ts.
 */

const start = useSim();
const SVC = '/api/v1/namespaces/default/services';
const MERGE = { contentType: 'application/merge-patch+json' };
const STRATEGIC = { contentType: 'application/strategic-merge-patch+json' };

const bogus = (name: string) => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name, bogus: 'm' },
  spec: { bogus: 1, ports: [{ port: 80, bogus: true }] },
});

describe('fieldValidation on create', () => {
  it('Strict: 400 naming every unknown field with its full path; nothing is stored', async () => {
    const sim = await start();
    const r = await api(sim, 'POST', `${SVC}?fieldValidation=Strict`, bogus('s'));
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({
      reason: 'BadRequest',
      code: 400,
      message:
        'Service in version "v1" cannot be handled as a Service: strict decoding error: unknown field "metadata.bogus", unknown field "spec.bogus", unknown field "spec.ports[0].bogus"',
    });
    expect((await api(sim, 'GET', `${SVC}/s`)).status).toBe(404);
  });

  it('Warn (the default): stored without the unknown fields, one Warning header per field', async () => {
    const sim = await start();
    for (const [name, query] of [
      ['w1', ''],
      ['w2', '?fieldValidation=Warn'],
    ] as const) {
      const r = await api(sim, 'POST', `${SVC}${query}`, bogus(name));
      expect(r.status).toBe(201);
      expect(r.headers['warning']).toBe(
        [
          '299 - "unknown field \\"metadata.bogus\\""',
          '299 - "unknown field \\"spec.bogus\\""',
          '299 - "unknown field \\"spec.ports[0].bogus\\""',
        ].join(', '),
      );
      const stored = (await api(sim, 'GET', `${SVC}/${name}`)).body;
      expect(stored.metadata.bogus).toBeUndefined();
      expect(stored.spec.bogus).toBeUndefined();
      expect(stored.spec.ports[0]).toEqual({ port: 80, protocol: 'TCP', targetPort: 80 });
      expect(r.body).toEqual(stored);
    }
  });

  it('Ignore: stored without the unknown fields and without warnings', async () => {
    const sim = await start();
    const r = await api(sim, 'POST', `${SVC}?fieldValidation=Ignore`, bogus('i'));
    expect(r.status).toBe(201);
    expect(r.headers['warning']).toBeUndefined();
    expect(r.body.spec.bogus).toBeUndefined();
    expect(r.body.metadata.bogus).toBeUndefined();
  });

  it('a clean body gets no Warning header', async () => {
    const sim = await start();
    const r = await api(sim, 'POST', SVC, svc('clean'));
    expect(r.status).toBe(201);
    expect(r.headers['warning']).toBeUndefined();
  });

  it('duplicate fields: Strict 400, Warn stores the last value with a warning', async () => {
    const sim = await start();
    const raw = (name: string) =>
      `{"metadata":{"name":"${name}","labels":{"a":"1"},"labels":{"a":"2"}},"spec":{"ports":[{"port":80,"port":81}]}}`;
    const strict = await api(sim, 'POST', `${SVC}?fieldValidation=Strict`, raw('d1'));
    expect(strict.status).toBe(400);
    expect(strict.body.message).toBe(
      'Service in version "v1" cannot be handled as a Service: strict decoding error: duplicate field "metadata.labels", duplicate field "spec.ports[0].port"',
    );
    const warn = await api(sim, 'POST', SVC, raw('d2'));
    expect(warn.status).toBe(201);
    expect(warn.headers['warning']).toBe(
      '299 - "duplicate field \\"metadata.labels\\"", 299 - "duplicate field \\"spec.ports[0].port\\""',
    );
    expect(warn.body.metadata.labels).toEqual({ a: '2' });
    expect(warn.body.spec.ports[0].port).toBe(81);
  });

  it('an unsupported fieldValidation value is 422 on CreateOptions', async () => {
    const sim = await start();
    const r = await api(sim, 'POST', `${SVC}?fieldValidation=Loud`, svc('x'));
    expect(r.status).toBe(422);
    expect(r.body.message).toBe(
      'CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "Loud": supported values: "", "Ignore", "Strict", "Warn"',
    );
  });
});

describe('fieldValidation on update (PUT)', () => {
  it('Strict 400 leaves the object alone; Warn updates without the field and warns', async () => {
    const sim = await start();
    const created = await createSvc(sim, 'default', 'u');
    const body: Loose = { ...created, spec: { ...created.spec, bogus: 1 } };
    const strict = await api(sim, 'PUT', `${SVC}/u?fieldValidation=Strict`, body);
    expect(strict.status).toBe(400);
    expect(strict.body.message).toBe(
      'Service in version "v1" cannot be handled as a Service: strict decoding error: unknown field "spec.bogus"',
    );
    const same = await api(sim, 'GET', `${SVC}/u`);
    expect(same.body.metadata.resourceVersion).toBe(created.metadata.resourceVersion);

    body.metadata = { ...created.metadata, labels: { changed: 'yes' } };
    const warn = await api(sim, 'PUT', `${SVC}/u`, body);
    expect(warn.status).toBe(200);
    expect(warn.headers['warning']).toBe('299 - "unknown field \\"spec.bogus\\""');
    expect(warn.body.metadata.labels).toEqual({ changed: 'yes' });
    expect(warn.body.spec.bogus).toBeUndefined();
  });
});

describe('fieldValidation on patch', () => {
  it('merge patch, Strict: 422 on the field "patch", as the apiserver patcher answers', async () => {
    const sim = await start();
    const created = await createSvc(sim, 'default', 'p');
    const r = await api(sim, 'PATCH', `${SVC}/p?fieldValidation=Strict`, { spec: { bogus: 1 } }, MERGE);
    expect(r.status).toBe(422);
    expect(r.body.reason).toBe('Invalid');
    expect(r.body.message).toMatch(
      /^ "" is invalid: patch: Invalid value: ".*": strict decoding error: unknown field "spec.bogus"$/,
    );
    expect(r.body.details.causes).toEqual([
      expect.objectContaining({ reason: 'FieldValueInvalid', field: 'patch' }),
    ]);
    expect((await api(sim, 'GET', `${SVC}/p`)).body.metadata.resourceVersion).toBe(
      created.metadata.resourceVersion,
    );
  });

  it('strategic merge patch, Strict: the patch is printed as a Go map', async () => {
    const sim = await start();
    await createSvc(sim, 'default', 'p');
    const r = await api(sim, 'PATCH', `${SVC}/p?fieldValidation=Strict`, { spec: { bogus: 1 } }, STRATEGIC);
    expect(r.status).toBe(422);
    expect(r.body.message).toBe(
      ' "" is invalid: patch: Invalid value: "map[spec:map[bogus:1]]": strict decoding error: unknown field "spec.bogus"',
    );
  });

  it('Warn (default) applies the rest and warns; Ignore applies silently; JSON patch too', async () => {
    const sim = await start();
    await createSvc(sim, 'default', 'p');
    const warn = await api(
      sim,
      'PATCH',
      `${SVC}/p`,
      { metadata: { labels: { a: 'b' } }, spec: { bogus: 1 } },
      MERGE,
    );
    expect(warn.status).toBe(200);
    expect(warn.headers['warning']).toBe('299 - "unknown field \\"spec.bogus\\""');
    expect(warn.body.metadata.labels).toEqual({ a: 'b' });
    expect(warn.body.spec.bogus).toBeUndefined();
    const ignore = await api(sim, 'PATCH', `${SVC}/p?fieldValidation=Ignore`, { spec: { bogus: 2 } }, MERGE);
    expect(ignore.status).toBe(200);
    expect(ignore.headers['warning']).toBeUndefined();
    expect(ignore.body.spec.bogus).toBeUndefined();
    const json = await api(
      sim,
      'PATCH',
      `${SVC}/p?fieldValidation=Strict`,
      [{ op: 'add', path: '/spec/ports/0/bogus', value: 1 }],
      {
        contentType: 'application/json-patch+json',
      },
    );
    expect(json.status).toBe(422);
    expect(json.body.message).toContain('strict decoding error: unknown field "spec.ports[0].bogus"');
    const dupes = await api(
      sim,
      'PATCH',
      `${SVC}/p?fieldValidation=Strict`,
      '{"metadata":{"labels":{"x":"1"},"labels":{"x":"2"}}}',
      MERGE,
    );
    expect(dupes.status).toBe(422);
    expect(dupes.body.message).toContain('strict decoding error: duplicate field "metadata.labels"');
  });
});

/** A body per kind with every field a real object of that kind may carry; Strict accepts it. */
const full: { kind: string; path: string; body: Loose; unknownAt: (b: Loose) => void; field: string }[] = [
  {
    kind: 'Service',
    path: SVC,
    body: {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: {
        name: 'full',
        labels: { a: 'b' },
        annotations: { c: 'd' },
        finalizers: ['example.com/f'],
        ownerReferences: [
          {
            apiVersion: 'v1',
            kind: 'ConfigMap',
            name: 'o',
            uid: 'u-1',
            controller: true,
            blockOwnerDeletion: false,
          },
        ],
      },
      spec: {
        type: 'LoadBalancer',
        selector: { app: 'x' },
        ports: [{ name: 'http', protocol: 'TCP', appProtocol: 'http', port: 80, targetPort: 'web' }],
        externalIPs: ['192.0.2.1'],
        sessionAffinity: 'ClientIP',
        sessionAffinityConfig: { clientIP: { timeoutSeconds: 60 } },
        loadBalancerSourceRanges: ['10.0.0.0/8'],
        externalTrafficPolicy: 'Cluster',
        publishNotReadyAddresses: true,
        allocateLoadBalancerNodePorts: true,
        loadBalancerClass: 'example.com/lb',
        internalTrafficPolicy: 'Local',
        trafficDistribution: 'PreferClose',
      },
      status: {
        loadBalancer: {
          ingress: [{ ip: '192.0.2.9', ipMode: 'VIP', ports: [{ port: 80, protocol: 'TCP' }] }],
        },
      },
    },
    unknownAt: (b) => (b.spec.sessionAffinityConfig.clientIP.bogus = 1),
    field: 'spec.sessionAffinityConfig.clientIP.bogus',
  },
  {
    kind: 'Namespace',
    path: '/api/v1/namespaces',
    body: {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'full', labels: { a: 'b' } },
      spec: { finalizers: ['kubernetes'] },
      status: { phase: 'Active', conditions: [{ type: 'X', status: 'True', reason: 'Y', message: 'z' }] },
    },
    unknownAt: (b) => (b.status.conditions[0].bogus = 1),
    field: 'status.conditions[0].bogus',
  },
  {
    kind: 'Lease',
    path: '/apis/coordination.k8s.io/v1/namespaces/default/leases',
    body: {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'full' },
      spec: {
        holderIdentity: 'a',
        leaseDurationSeconds: 15,
        acquireTime: '2024-01-01T00:00:00.000000Z',
        renewTime: '2024-01-01T00:00:01.000000Z',
        leaseTransitions: 2,
        strategy: 'OldestEmulationVersion',
        preferredHolder: 'b',
      },
    },
    unknownAt: (b) => (b.spec.bogus = 1),
    field: 'spec.bogus',
  },
  {
    kind: 'Event (core/v1)',
    path: '/api/v1/namespaces/default/events',
    body: {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'full' },
      involvedObject: {
        kind: 'Service',
        namespace: 'default',
        name: 'x',
        uid: 'u',
        apiVersion: 'v1',
        resourceVersion: '1',
        fieldPath: 'spec',
      },
      reason: 'Synced',
      message: 'm',
      source: { component: 'c', host: 'h' },
      firstTimestamp: '2024-01-01T00:00:00Z',
      lastTimestamp: '2024-01-01T00:00:00Z',
      count: 2,
      type: 'Normal',
      eventTime: '2024-01-01T00:00:00.000000Z',
      series: { count: 2, lastObservedTime: '2024-01-01T00:00:00.000000Z' },
      action: 'Sync',
      related: { kind: 'Pod', name: 'p' },
      reportingComponent: 'c',
      reportingInstance: 'i',
    },
    unknownAt: (b) => (b.involvedObject.bogus = 1),
    field: 'involvedObject.bogus',
  },
  {
    kind: 'Event (events.k8s.io/v1)',
    path: '/apis/events.k8s.io/v1/namespaces/default/events',
    body: {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { name: 'full' },
      eventTime: '2024-01-01T00:00:00.000000Z',
      series: { count: 2, lastObservedTime: '2024-01-01T00:00:00.000000Z' },
      reportingController: 'example.com/c',
      reportingInstance: 'i',
      action: 'Sync',
      reason: 'Synced',
      regarding: { kind: 'Service', namespace: 'default', name: 'x' },
      related: { kind: 'Pod', name: 'p' },
      note: 'n',
      type: 'Normal',
      deprecatedSource: { component: 'c', host: 'h' },
      deprecatedFirstTimestamp: '2024-01-01T00:00:00Z',
      deprecatedLastTimestamp: '2024-01-01T00:00:00Z',
      deprecatedCount: 1,
    },
    unknownAt: (b) => (b.series.bogus = 1),
    field: 'series.bogus',
  },
];

describe.each(full)('the $kind schema', (c) => {
  it('accepts every real field under Strict and names an unknown nested one', async () => {
    const sim = await start();
    const bad = structuredClone(c.body);
    c.unknownAt(bad);
    const rejected = await api(sim, 'POST', `${c.path}?fieldValidation=Strict`, bad);
    expect(rejected.status).toBe(400);
    expect(rejected.body.message).toContain(`strict decoding error: unknown field "${c.field}"`);
    if (c.kind === 'Event (events.k8s.io/v1)') {
      // Known fields, but a create through events.k8s.io/v1 must leave the deprecated ones unset
      // (ValidateEventCreate): decoded fine (no 400), refused by validation (422).
      const legacy = await api(sim, 'POST', `${c.path}?fieldValidation=Strict`, c.body);
      expect(legacy.status).toBe(422);
      expect(legacy.body.details.causes.map((x: { field: string }) => x.field)).toEqual([
        'firstTimestamp',
        'lastTimestamp',
        'count',
        'source',
      ]);
    }
    const body = structuredClone(c.body);
    if (c.kind === 'Event (events.k8s.io/v1)')
      for (const f of [
        'deprecatedSource',
        'deprecatedFirstTimestamp',
        'deprecatedLastTimestamp',
        'deprecatedCount',
      ])
        delete body[f];
    const ok = await api(sim, 'POST', `${c.path}?fieldValidation=Strict`, body);
    expect(ok.status, JSON.stringify(ok.body)).toBe(201);
    expect(ok.headers['warning']).toBeUndefined();
  });
});
