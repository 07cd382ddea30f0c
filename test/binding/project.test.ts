import { describe, expect, it } from 'vitest';
import { parsePortsAnnotation } from '../../src/binding/service-format.js';
import { project } from '../../src/binding/project.js';
import type { ProjectionInput } from '../../src/binding/project.js';
import { compileSelector } from '../../src/binding/selector.js';
import type { ClusterView, EndpointRecord, EndpointStatus, NamespacePhase } from '../../src/binding/types.js';
import type { Service } from '../../src/kube/objects.js';
import { PROJECTABLE_URLS, REFUSED_URLS, UNHOLDABLE_URLS } from '../fixtures/endpoint-urls.js';
import { ALIAS_ANNOTATION } from '../../src/binding/identity.js';
import { OPNS, RELEASE, asApplied, asStored, config, seeded } from './helpers.js';

const ID = 'ep_01jabcdefghjkmnpqrstvwxyz0';

function ep(id: string, url: string, minute = 0, extra: Partial<EndpointRecord> = {}): EndpointRecord {
  return { id, url, created_at: `2026-01-01T00:${String(minute).padStart(2, '0')}:00Z`, ...extra };
}

function cluster(overrides: Partial<ClusterView> = {}): ClusterView {
  return {
    owned: [],
    namespaces: new Map<string, NamespacePhase>([
      [OPNS, 'Active'],
      ['prod', 'Active'],
      ['staging', 'Active'],
      ['b', 'Active'],
      ['ns', 'Active'],
    ]),
    foreign: new Set(),
    ...overrides,
  };
}

function run(endpoints: EndpointRecord[], overrides: Partial<ProjectionInput> = {}) {
  return project({
    endpoints,
    select: () => ({ selected: true }),
    cluster: cluster(),
    config: config(),
    random: seeded(1),
    ...overrides,
  });
}

function status(statuses: EndpointStatus[], id: string): EndpointStatus {
  const s = statuses.find((x) => x.id === id);
  if (!s) throw new Error(`no status for ${id}`);
  return s;
}

function portsOf(svc: Service | undefined): [string | undefined, number, unknown][] {
  return (svc?.spec?.ports ?? []).map((p) => [p.name, p.port, p.targetPort]);
}

const ownership = {
  'app.kubernetes.io/managed-by': 'endpoint-binder',
  'app.kubernetes.io/instance': RELEASE,
  'endpoint-binder.io/operator-namespace': OPNS,
};

describe('project: the exact objects for one endpoint', () => {
  it(`${ID} with http://api.prod → internal ep-… in ${OPNS} and alias api in prod`, () => {
    const d = run([ep(ID, 'http://api.prod')]);
    const internalName = 'ep-01jabcdefghjkmnpqrstvwxyz0';
    const port = d.ports.get('http://api.prod:80')!;
    expect(port).toBeGreaterThanOrEqual(10000);
    expect(port).toBeLessThanOrEqual(19999);
    expect([...d.services.keys()].sort()).toEqual([`${OPNS}/${internalName}`, 'prod/api']);
    expect(d.services.get(`${OPNS}/${internalName}`)).toEqual({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: {
        name: internalName,
        namespace: OPNS,
        labels: {
          ...ownership,
          'endpoint-binder.io/role': 'internal',
          'endpoint-binder.io/state': 'projected',
        },
        annotations: {
          'endpoint-binder.io/endpoint-id': ID,
          'endpoint-binder.io/endpoint-url': 'http://api.prod:80',
          'endpoint-binder.io/ports': `{"${port}":"http://api.prod:80"}`,
        },
      },
      spec: {
        type: 'ClusterIP',
        selector: {
          'app.kubernetes.io/name': 'endpoint-binder',
          'app.kubernetes.io/instance': RELEASE,
          'app.kubernetes.io/component': 'forwarder',
        },
        ports: [{ name: 'http-80', protocol: 'TCP', port: 80, targetPort: port }],
      },
    });
    expect(d.services.get('prod/api')).toEqual({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: {
        name: 'api',
        namespace: 'prod',
        labels: { ...ownership, 'endpoint-binder.io/role': 'alias', 'endpoint-binder.io/state': 'projected' },
        annotations: { 'endpoint-binder.io/endpoint-ids': JSON.stringify([ID]) },
      },
      spec: {
        type: 'ExternalName',
        externalName: `${internalName}.${OPNS}.svc.cluster.local`,
        ports: [{ name: 'http-80', protocol: 'TCP', port: 80, targetPort: 80 }],
      },
    });
    expect(d.statuses).toEqual([
      {
        id: ID,
        url: 'http://api.prod',
        state: 'projected',
        reason: '',
        internalService: { namespace: OPNS, name: internalName },
        aliasService: { namespace: 'prod', name: 'api' },
        targetPort: port,
      },
    ]);
    expect(d.repairs).toEqual([]);
  });

  it('uses the configured cluster domain and never writes an ingress annotation (the install record carries it)', () => {
    const d = run([ep('ep_a', 'http://api.prod')], {
      config: config({ clusterDomain: 'corp.internal' }),
    });
    expect(d.services.get('prod/api')?.spec?.externalName).toBe(`ep-a.${OPNS}.svc.corp.internal`);
    expect(d.services.get(`${OPNS}/ep-a`)?.metadata.annotations).not.toHaveProperty(
      'endpoint-binder.io/ingress',
    );
  });

  it('adds the configured extra labels and annotations to both Services; ours win a clash', () => {
    const d = run([ep('ep_a', 'http://api.prod')], {
      config: config({
        serviceLabels: {
          team: 'web',
          'app.kubernetes.io/managed-by': 'helm',
          'endpoint-binder.io/state': 'x',
        },
        serviceAnnotations: {
          owner: 'ops',
          'endpoint-binder.io/reason': 'nope',
          'endpoint-binder.io/endpoint-id': 'x',
        },
      }),
    });
    for (const key of [`${OPNS}/ep-a`, 'prod/api']) {
      const meta = d.services.get(key)!.metadata;
      expect(meta.labels).toMatchObject({ team: 'web', 'app.kubernetes.io/managed-by': 'endpoint-binder' });
      expect(meta.labels?.['endpoint-binder.io/state']).toBe('projected');
      expect(meta.annotations).toMatchObject({ owner: 'ops' });
      expect(meta.annotations).not.toHaveProperty('endpoint-binder.io/reason');
    }
    expect(d.services.get(`${OPNS}/ep-a`)!.metadata.annotations?.['endpoint-binder.io/endpoint-id']).toBe(
      'ep_a',
    );
  });
});

describe('project: URL checks', () => {
  it.each(PROJECTABLE_URLS.map((u) => [u.input, u]))('%s projects', (_input, u) => {
    const d = run([ep('ep_a', u.input)], {
      cluster: cluster({ namespaces: new Map([[u.namespace, 'Active']]) }),
    });
    expect(d.statuses[0]!.state).toBe('projected');
    const alias = d.services.get(`${u.namespace}/${u.name}`)!;
    expect(portsOf(alias)).toEqual([[`${u.scheme}-${u.port}`, u.port, u.port]]);
    expect(d.ports.has(u.canonical)).toBe(true);
  });

  it.each(REFUSED_URLS.map((u) => [u.input, u.rule]))(
    '%s is invalid-url (rule %i), never selected',
    (input, rule) => {
      let asked = 0;
      const d = run([ep('ep_a', input)], {
        select: () => {
          asked++;
          return { selected: true };
        },
      });
      expect(d.statuses[0]).toMatchObject({
        state: 'invalid-url',
        reason: expect.stringContaining(`rule ${rule}: `),
      });
      expect(d.services.size).toBe(0);
      expect(asked).toBe(0);
    },
  );

  it.each(UNHOLDABLE_URLS.map((u) => [u.input, u.reason]))(
    '%s is invalid-url with the reason',
    (input, reason) => {
      const d = run([ep('ep_a', input)], {
        cluster: cluster({
          namespaces: new Map([
            ['2', 'Active'],
            ['ns', 'Active'],
            ['prod', 'Active'],
          ]),
        }),
      });
      expect(d.statuses[0]!.state).toBe('invalid-url');
      expect(d.statuses[0]!.reason).toMatch(reason);
      expect(d.services.size).toBe(0);
    },
  );

  it('invalid URLs never block others', () => {
    const d = run([
      ep('ep_bad1', 'http://1.2', 0),
      ep('ep_bad2', 'https://api.prod', 1),
      ep('ep_ok', 'http://api.prod', 2),
    ]);
    expect(d.statuses.map((s) => s.state)).toEqual(['invalid-url', 'invalid-url', 'projected']);
    expect(d.services.get('prod/api')?.spec?.externalName).toBe(`ep-ok.${OPNS}.svc.cluster.local`);
  });
});

describe('project: the selector', () => {
  it('not-selected when false or failing, with a reason; the compiled selector plugs in', () => {
    const compiled = compileSelector("{'api': true, 'web': false}[endpoint.name]");
    if (!compiled.ok) throw new Error(compiled.message);
    const d = run(
      [ep('ep_a', 'http://api.prod'), ep('ep_b', 'http://web.prod'), ep('ep_c', 'http://db.prod')],
      {
        select: (v) => compiled.selector.evaluate(v),
      },
    );
    expect(d.statuses.map((s) => s.state)).toEqual(['projected', 'not-selected', 'not-selected']);
    expect(d.statuses[1]!.reason).toBe('the endpoint selector is false for this endpoint');
    expect(d.statuses[2]!.reason).toMatch(/^the endpoint selector failed on this endpoint: No such key: db/);
    expect([...d.services.keys()].sort()).toEqual([`${OPNS}/ep-a`, 'prod/api']);
  });

  it('sees the view: port as a BigInt, description and metadata', () => {
    const seen: unknown[] = [];
    run([ep('ep_a', 'tcp://db.prod:5432', 0, { description: 'd', metadata: 'm' })], {
      select: (v) => {
        seen.push(v);
        return { selected: true };
      },
    });
    expect(seen).toEqual([
      {
        id: 'ep_a',
        url: 'tcp://db.prod:5432',
        scheme: 'tcp',
        host: 'db.prod',
        name: 'db',
        namespace: 'prod',
        port: 5432n,
        description: 'd',
        metadata: 'm',
      },
    ]);
  });
});

describe('project: hostname groups', () => {
  it('the internal Service the alias points at (the oldest) carries all of the group ports; the others their own', () => {
    // Input order is not age order; statuses keep the input order.
    const d = run([
      ep('ep_c', 'http://api.prod:8080', 3),
      ep('ep_a', 'http://api.prod', 1),
      ep('ep_b', 'tcp://api.prod:5432', 2),
    ]);
    expect(d.statuses.map((s) => [s.id, s.state])).toEqual([
      ['ep_c', 'projected'],
      ['ep_a', 'projected'],
      ['ep_b', 'projected'],
    ]);
    const fwd = (u: string) => d.ports.get(u)!;
    const expected = [
      ['http-80', 80, fwd('http://api.prod:80')],
      ['tcp-5432', 5432, fwd('tcp://api.prod:5432')],
      ['http-8080', 8080, fwd('http://api.prod:8080')],
    ];
    const target = d.services.get(`${OPNS}/ep-a`)!;
    expect(portsOf(target)).toEqual(expected);
    const parsed = parsePortsAnnotation(target.metadata.annotations?.['endpoint-binder.io/ports']);
    expect(parsed.ok && [...parsed.ports].sort((a, b) => a[0] - b[0])).toEqual(
      [
        [fwd('http://api.prod:80'), 'http://api.prod:80'],
        [fwd('tcp://api.prod:5432'), 'tcp://api.prod:5432'],
        [fwd('http://api.prod:8080'), 'http://api.prod:8080'],
      ].sort((a, b) => (a[0] as number) - (b[0] as number)),
    );
    // The others: their own URL's port only (O(members) for the group, not O(members²)).
    expect(portsOf(d.services.get(`${OPNS}/ep-b`))).toEqual([expected[1]]);
    expect(portsOf(d.services.get(`${OPNS}/ep-c`))).toEqual([expected[2]]);
    const own = parsePortsAnnotation(
      d.services.get(`${OPNS}/ep-c`)!.metadata.annotations?.['endpoint-binder.io/ports'],
    );
    expect(own.ok && [...own.ports]).toEqual([[fwd('http://api.prod:8080'), 'http://api.prod:8080']]);
    expect(d.services.get(`${OPNS}/ep-c`)!.metadata.annotations?.['endpoint-binder.io/endpoint-url']).toBe(
      'http://api.prod:8080',
    );
    const alias = d.services.get('prod/api')!;
    expect(alias.spec?.externalName).toBe(`ep-a.${OPNS}.svc.cluster.local`);
    expect(alias.metadata.annotations?.['endpoint-binder.io/endpoint-ids']).toBe('["ep_a","ep_b","ep_c"]');
    expect(portsOf(alias)).toEqual([
      ['http-80', 80, 80],
      ['tcp-5432', 5432, 5432],
      ['http-8080', 8080, 8080],
    ]);
  });

  it('orders by created_at as instants, then by id', () => {
    const d = run([
      ep('ep_b', 'http://api.prod', 0, { created_at: '2026-01-01T01:00:00+02:00' }), // 23:00 the day before
      ep('ep_a', 'http://api.prod', 0, { created_at: '2026-01-01T00:00:00Z' }),
      ep('ep_0', 'http://api.prod', 0, { created_at: '2026-01-01T00:00:00Z' }),
    ]);
    expect(d.services.get('prod/api')!.metadata.annotations?.['endpoint-binder.io/endpoint-ids']).toBe(
      '["ep_b","ep_0","ep_a"]',
    );
  });

  it('pools identical URLs: one forwarder port, listed by each endpoint’s internal Service', () => {
    const d = run([ep('ep_a', 'http://api.prod', 1), ep('ep_b', 'http://api.prod:80', 2)]);
    expect(d.ports.size).toBe(1);
    const port = d.ports.get('http://api.prod:80')!;
    expect(portsOf(d.services.get(`${OPNS}/ep-a`))).toEqual([['http-80', 80, port]]);
    expect(portsOf(d.services.get(`${OPNS}/ep-b`))).toEqual([['http-80', 80, port]]);
    expect(d.statuses.map((s) => [s.state, s.targetPort, s.aliasService?.name])).toEqual([
      ['projected', port, 'api'],
      ['projected', port, 'api'],
    ]);
    expect(d.services.get('prod/api')!.metadata.annotations?.['endpoint-binder.io/endpoint-ids']).toBe(
      '["ep_a","ep_b"]',
    );
  });

  it('two schemes on one host and port: the newer is port-conflict with a labelled internal Service', () => {
    const d = run([
      ep('ep_new', 'tcp://api.prod:80', 2),
      ep('ep_old', 'http://api.prod', 1),
      ep('ep_db', 'tcp://api.prod:5432', 3),
    ]);
    const conflict = status(d.statuses, 'ep_new');
    expect(conflict.state).toBe('port-conflict');
    expect(conflict.reason).toBe(
      'port 80 of api.prod is already used by http://api.prod:80 of older endpoint ep_old',
    );
    expect(conflict.targetPort).toBeUndefined();
    expect(conflict.aliasService).toBeUndefined();
    expect(d.ports.has('tcp://api.prod:80')).toBe(false);
    const svc = d.services.get(`${OPNS}/ep-new`)!;
    expect(svc.metadata.labels?.['endpoint-binder.io/state']).toBe('port-conflict');
    expect(svc.metadata.annotations?.['endpoint-binder.io/reason']).toBe(conflict.reason);
    // The winner's port of its host:port, so the conflict shows next to what holds the port.
    expect(portsOf(svc)).toEqual([['http-80', 80, d.ports.get('http://api.prod:80')]]);
    const alias = d.services.get('prod/api')!;
    expect(alias.spec?.externalName).toBe(`ep-old.${OPNS}.svc.cluster.local`);
    expect(alias.metadata.annotations?.['endpoint-binder.io/endpoint-ids']).toBe('["ep_old","ep_db"]');
  });
});

describe('project: conflicts with Services that are not ours', () => {
  it('a foreign Service holding the alias name: the whole group is name-conflict, no alias', () => {
    const d = run(
      [
        ep('ep_a', 'http://api.prod', 1),
        ep('ep_b', 'tcp://api.prod:5432', 2),
        ep('ep_c', 'http://web.prod', 3),
      ],
      {
        cluster: cluster({ foreign: new Set(['prod/api']) }),
      },
    );
    expect(d.statuses.map((s) => s.state)).toEqual(['name-conflict', 'name-conflict', 'projected']);
    expect(d.statuses[0]!.reason).toBe(
      `Service prod/api is not managed by this install (release "${RELEASE}", operator namespace "${OPNS}"); the alias Service cannot be created`,
    );
    expect(d.services.has('prod/api')).toBe(false);
    expect(d.services.get(`${OPNS}/ep-a`)!.metadata.labels?.['endpoint-binder.io/state']).toBe(
      'name-conflict',
    );
    expect(d.statuses[0]!.internalService).toEqual({ namespace: OPNS, name: 'ep-a' });
    expect(d.statuses[0]!.aliasService).toBeUndefined();
    expect(d.services.has('prod/web')).toBe(true);
  });

  it('the alias name taken outranks port-conflict and ports-exhausted in the group', () => {
    const d = run(
      [
        ep('ep_a', 'http://api.prod', 1),
        ep('ep_b', 'tcp://api.prod:80', 2),
        ep('ep_c', 'tcp://api.prod:5432', 3),
      ],
      {
        cluster: cluster({ foreign: new Set(['prod/api']) }),
        config: config({ portRange: { min: 15000, max: 15000 } }),
      },
    );
    expect(d.statuses.map((s) => s.state)).toEqual(['name-conflict', 'name-conflict', 'name-conflict']);
    // ep_a has a port, ep_b lost its port (its Service shows the conflict), ep_c has none: no Service.
    expect(d.statuses.map((s) => s.internalService?.name)).toEqual(['ep-a', 'ep-b', undefined]);
    expect(portsOf(d.services.get(`${OPNS}/ep-b`))).toEqual([['http-80', 80, 15000]]);
    expect(d.services.has('prod/api')).toBe(false);
  });

  it('a foreign entry for a namespace that does not exist does not hide namespace-missing', () => {
    const d = run([ep('ep_a', 'http://api.gone')], { cluster: cluster({ foreign: new Set(['gone/api']) }) });
    expect(d.statuses[0]!.state).toBe('namespace-missing');
  });

  it('a foreign Service holding an internal name: that endpoint is name-conflict; the alias uses the next oldest', () => {
    const d = run([ep('ep_a', 'http://api.prod', 1), ep('ep_b', 'tcp://api.prod:5432', 2)], {
      cluster: cluster({ foreign: new Set([`${OPNS}/ep-a`]) }),
    });
    expect(status(d.statuses, 'ep_a')).toMatchObject({
      state: 'name-conflict',
      reason: expect.stringMatching(new RegExp(`^Service ${OPNS}/ep-a is not managed by this install`)),
    });
    expect(status(d.statuses, 'ep_a').internalService).toBeUndefined();
    expect(d.services.has(`${OPNS}/ep-a`)).toBe(false);
    expect(status(d.statuses, 'ep_b').state).toBe('projected');
    const alias = d.services.get('prod/api')!;
    expect(alias.spec?.externalName).toBe(`ep-b.${OPNS}.svc.cluster.local`);
    expect(alias.metadata.annotations?.['endpoint-binder.io/endpoint-ids']).toBe('["ep_b"]');
    expect(portsOf(alias)).toEqual([['tcp-5432', 5432, 5432]]);
  });

  it('two ids mapping to one internal name: the older keeps it, the newer is name-conflict', () => {
    const d = run([ep('ep-a', 'http://web.prod', 2), ep('ep_a', 'http://api.prod', 1)]);
    expect(d.statuses.map((s) => s.state)).toEqual(['name-conflict', 'projected']);
    expect(d.statuses[0]!.reason).toBe('older endpoint ep_a already has the internal Service name ep-a');
    expect(d.services.get(`${OPNS}/ep-a`)!.metadata.annotations?.['endpoint-binder.io/endpoint-id']).toBe(
      'ep_a',
    );
    expect(d.services.has('prod/web')).toBe(false);
  });

  it('an alias name equal to one of our internal Services is name-conflict', () => {
    const d = run([ep('ep_a', 'http://api.prod', 1), ep('ep_b', `http://ep-a.${OPNS}`, 2)]);
    expect(status(d.statuses, 'ep_b')).toMatchObject({
      state: 'name-conflict',
      reason: `the alias name ${OPNS}/ep-a is the internal Service of endpoint ep_a`,
    });
    expect(d.services.get(`${OPNS}/ep-a`)!.spec?.type).toBe('ClusterIP');
  });
});

describe('project: namespaces', () => {
  it.each([
    [
      'missing',
      undefined,
      /^namespace "prod" does not exist; the alias Service prod\/api is created when it does$/,
    ],
    [
      'terminating',
      'Terminating' as const,
      /^namespace "prod" is being deleted; no alias Service is written there$/,
    ],
  ])('namespace %s: namespace-missing, internal Service yes, alias no', (_what, phase, reason) => {
    const namespaces = new Map<string, NamespacePhase>([[OPNS, 'Active']]);
    if (phase) namespaces.set('prod', phase);
    const d = run([ep('ep_a', 'http://api.prod')], { cluster: cluster({ namespaces }) });
    expect(d.statuses[0]!.state).toBe('namespace-missing');
    expect(d.statuses[0]!.reason).toMatch(reason);
    expect(d.statuses[0]!.targetPort).toBe(d.ports.get('http://api.prod:80'));
    expect([...d.services.keys()]).toEqual([`${OPNS}/ep-a`]);
    expect(d.services.get(`${OPNS}/ep-a`)!.metadata.labels?.['endpoint-binder.io/state']).toBe(
      'namespace-missing',
    );
  });
});

describe('project: forwarder ports', () => {
  it('ports-exhausted for the URLs left without a port; the others are unaffected', () => {
    const d = run(
      [
        ep('ep_a', 'http://api.prod', 1),
        ep('ep_b', 'http://web.prod', 2),
        ep('ep_c', 'tcp://api.prod:5432', 3),
      ],
      {
        config: config({ portRange: { min: 15000, max: 15000 } }),
      },
    );
    expect(d.statuses.map((s) => s.state)).toEqual(['projected', 'ports-exhausted', 'ports-exhausted']);
    expect(d.statuses[1]!.reason).toBe('no free forwarder port left in the range 15000-15000');
    expect(d.statuses[1]!.internalService).toBeUndefined();
    expect([...d.services.keys()].sort()).toEqual([`${OPNS}/ep-a`, 'prod/api']);
    expect(portsOf(d.services.get('prod/api'))).toEqual([['http-80', 80, 80]]);
  });

  it('keeps the ports the cluster has, across passes, without drawing random numbers', () => {
    const endpoints = [
      ep('ep_a', 'http://api.prod', 1),
      ep('ep_b', 'tcp://api.prod:5432', 2),
      ep('ep_c', 'http://web.staging', 3),
    ];
    const first = run(endpoints);
    // As the controller leaves them: each internal Service records its alias's uid.
    const owned = asApplied(first.services.values(), 0);
    const second = run(endpoints, {
      cluster: cluster({ owned }),
      random: () => {
        throw new Error('random() must not be called');
      },
    });
    expect(second.ports).toEqual(first.ports);
    const withAliasUids = new Map(owned.map((s) => [`${s.metadata.namespace}/${s.metadata.name}`, s]));
    for (const [key, svc] of second.services)
      expect(svc.metadata.annotations).toEqual(withAliasUids.get(key)!.metadata.annotations);
    const aliasFree = (m: Map<string, Service>) =>
      new Map(
        [...m].map(([k, s]) => {
          const annotations = { ...s.metadata.annotations };
          delete annotations[ALIAS_ANNOTATION];
          return [k, { ...s, metadata: { ...s.metadata, annotations } }];
        }),
      );
    expect(aliasFree(second.services)).toEqual(aliasFree(first.services));
  });

  it('uses the port hints for URLs the cluster has no claim for', () => {
    const d = run([ep('ep_a', 'http://api.prod')], { portHints: new Map([['http://api.prod:80', 17777]]) });
    expect(d.ports.get('http://api.prod:80')).toBe(17777);
  });

  it('repairs a duplicate port found in the cluster and reports it', () => {
    const endpoints = [ep('ep_a', 'http://api.prod', 1), ep('ep_b', 'http://web.prod', 2)];
    const first = run(endpoints);
    const a = asStored(first.services.get(`${OPNS}/ep-a`)!, 1);
    const b = asStored(first.services.get(`${OPNS}/ep-b`)!, 2);
    b.metadata.creationTimestamp = '2026-02-01T00:00:00Z';
    b.spec!.ports![0]!.targetPort = a.spec!.ports![0]!.targetPort;
    const d = run(endpoints, { cluster: cluster({ owned: [a, b] }) });
    expect(d.ports.get('http://api.prod:80')).toBe(a.spec!.ports![0]!.targetPort);
    expect(d.ports.get('http://web.prod:80')).not.toBe(a.spec!.ports![0]!.targetPort);
    expect(d.repairs.map((r) => r.kind)).toEqual(['duplicate-port']);
  });

  it('ignores owned Services outside the operator namespace when reading claims', () => {
    const first = run([ep('ep_a', 'http://api.prod')]);
    const stray = asStored(first.services.get(`${OPNS}/ep-a`)!);
    stray.metadata.namespace = 'elsewhere';
    stray.spec!.ports![0]!.targetPort = 12345;
    const d = run([ep('ep_a', 'http://api.prod')], {
      cluster: cluster({ owned: [stray] }),
      random: seeded(99),
    });
    expect(d.ports.get('http://api.prod:80')).not.toBe(12345);
  });
});
