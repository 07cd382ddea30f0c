import { describe, expect, it } from 'vitest';
import { needsUpdate, plan, writeOwnedFields } from '../../src/binding/plan.js';
import { project } from '../../src/binding/project.js';
import type { EndpointRecord, NamespacePhase } from '../../src/binding/types.js';
import type { Service } from '../../src/kube/objects.js';
import { OPNS, asStored, config, seeded } from './helpers.js';

function ep(id: string, url: string, minute = 0): EndpointRecord {
  return { id, url, created_at: `2026-01-01T00:${String(minute).padStart(2, '0')}:00Z` };
}

function desiredFor(
  endpoints: EndpointRecord[],
  namespaces: string[] = ['prod', 'staging'],
): Map<string, Service> {
  return project({
    endpoints,
    select: () => ({ selected: true }),
    cluster: {
      owned: [],
      namespaces: new Map<string, NamespacePhase>([
        [OPNS, 'Active'],
        ...namespaces.map((n) => [n, 'Active'] as [string, NamespacePhase]),
      ]),
      foreign: new Set(),
    },
    config: config({ serviceLabels: { team: 'web' } }),
    random: seeded(4),
  }).services;
}

/** What the API server would hold after creating every desired Service. */
function storedCopy(desired: ReadonlyMap<string, Service>): Map<string, Service> {
  return new Map([...desired].map(([k, s], i) => [k, asStored(s, i + 1)]));
}

const OPTS = { allowDeletes: true, frozenNamespaces: new Set<string>() };
const ENDPOINTS = [
  ep('ep_a', 'http://api.prod', 1),
  ep('ep_b', 'tcp://api.prod:5432', 2),
  ep('ep_c', 'http://web.staging', 3),
];

describe('plan', () => {
  it('creates everything on an empty cluster, in key order', () => {
    const desired = desiredFor(ENDPOINTS);
    const actions = plan(desired, new Map(), OPTS);
    expect(actions.map((a) => [a.op, a.key])).toEqual([...desired.keys()].sort().map((k) => ['create', k]));
    expect(actions.every((a) => a.op === 'create' && a.desired === desired.get(a.key))).toBe(true);
  });

  it('is zero actions over what the API server stored (server-set and defaulted fields are not differences)', () => {
    const desired = desiredFor(ENDPOINTS);
    const actual = storedCopy(desired);
    expect(actual.get('prod/api')!.spec!.sessionAffinity).toBe('None');
    expect(actual.get(`${OPNS}/ep-a`)!.spec!.clusterIP).toBeDefined();
    expect(plan(desired, actual, OPTS)).toEqual([]);
    for (const [k, s] of desired) expect(needsUpdate(s, actual.get(k)!)).toBe(false);
  });

  it('tolerates a live port list in another order and a server-defaulted protocol', () => {
    const desired = desiredFor(ENDPOINTS);
    const actual = storedCopy(desired);
    const live = actual.get(`${OPNS}/ep-a`)!;
    live.spec!.ports = [...live.spec!.ports!].reverse().map(({ protocol: _p, ...rest }) => rest);
    expect(plan(desired, actual, OPTS)).toEqual([]);
  });

  it('updates a drifted field, writing ours over the live object and keeping server and foreign fields', () => {
    const desired = desiredFor(ENDPOINTS);
    const actual = storedCopy(desired);
    const key = `${OPNS}/ep-a`;
    const live = actual.get(key)!;
    live.metadata.labels = {
      ...live.metadata.labels,
      'endpoint-binder.io/state': 'namespace-missing',
      'example.com/keep': 'yes',
    };
    live.metadata.annotations = {
      ...live.metadata.annotations,
      'endpoint-binder.io/reason': 'stale',
      'endpoint-binder.io/orphaned': 'true',
      'kubectl.kubernetes.io/last-applied-configuration': '{}',
    };
    live.spec!.ports![0]!.targetPort = 19999;
    live.spec!.ports![0]!.appProtocol = 'http';

    const actions = plan(desired, actual, OPTS);
    expect(actions.map((a) => [a.op, a.key])).toEqual([['update', key]]);
    const action = actions[0]!;
    if (action.op !== 'update') throw new Error('expected update');
    const obj = action.object;
    expect(obj.metadata.resourceVersion).toBe(live.metadata.resourceVersion);
    expect(obj.metadata.uid).toBe(live.metadata.uid);
    expect(obj.spec).toMatchObject({
      clusterIP: live.spec!.clusterIP,
      clusterIPs: live.spec!.clusterIPs,
      ipFamilies: ['IPv4'],
      ipFamilyPolicy: 'SingleStack',
      sessionAffinity: 'None',
      internalTrafficPolicy: 'Cluster',
    });
    expect(obj.metadata.labels).toEqual({ ...desired.get(key)!.metadata.labels, 'example.com/keep': 'yes' });
    expect(obj.metadata.annotations).toEqual({
      ...desired.get(key)!.metadata.annotations,
      'kubectl.kubernetes.io/last-applied-configuration': '{}',
    });
    expect(obj.spec!.ports).toEqual(
      desired.get(key)!.spec!.ports!.map((p, i) => (i === 0 ? { ...p, appProtocol: 'http' } : p)),
    );
    // The result is stable: writing it back gives no further action.
    expect(needsUpdate(desired.get(key)!, obj)).toBe(false);
    expect(live.spec!.ports![0]!.targetPort).toBe(19999); // the live object is not mutated
  });

  it.each([
    [
      'an extra port',
      (s: Service) => s.spec!.ports!.push({ name: 'http-81', protocol: 'TCP', port: 81, targetPort: 11 }),
    ],
    ['a port name', (s: Service) => (s.spec!.ports![0]!.name = 'x')],
    ['a protocol', (s: Service) => (s.spec!.ports![0]!.protocol = 'UDP')],
    ['a port number', (s: Service) => (s.spec!.ports![0]!.port = 81)],
    ['a named targetPort', (s: Service) => (s.spec!.ports![0]!.targetPort = 'http')],
    ['the selector', (s: Service) => (s.spec!.selector = { app: 'other' })],
    ['a missing label of ours', (s: Service) => delete s.metadata.labels!['app.kubernetes.io/instance']],
    ['a configured extra label', (s: Service) => (s.metadata.labels!.team = 'db')],
    ['an annotation of ours', (s: Service) => (s.metadata.annotations!['endpoint-binder.io/ports'] = '{}')],
  ])('an internal Service with a changed %s is updated', (_what, change) => {
    const desired = desiredFor(ENDPOINTS);
    const actual = storedCopy(desired);
    change(actual.get(`${OPNS}/ep-a`)!);
    const actions = plan(desired, actual, OPTS);
    expect(actions.map((a) => [a.op, a.key])).toEqual([['update', `${OPNS}/ep-a`]]);
    const action = actions[0]!;
    expect(action.op === 'update' && needsUpdate(action.desired, action.object)).toBe(false);
  });

  it('updates an alias whose externalName changed and drops a live selector', () => {
    const desired = desiredFor(ENDPOINTS);
    const actual = storedCopy(desired);
    const alias = actual.get('prod/api')!;
    alias.spec!.externalName = 'elsewhere.example';
    alias.spec!.selector = { a: 'b' };
    const actions = plan(desired, actual, OPTS);
    expect(actions.map((a) => [a.op, a.key])).toEqual([['update', 'prod/api']]);
    const obj = (actions[0] as { object: Service }).object;
    expect(obj.spec!.externalName).toBe(desired.get('prod/api')!.spec!.externalName);
    expect(obj.spec).not.toHaveProperty('selector');
  });

  it('ignores foreign label and annotation keys that differ', () => {
    const desired = desiredFor(ENDPOINTS);
    const actual = storedCopy(desired);
    actual.get('prod/api')!.metadata.labels!['example.com/x'] = 'y';
    actual.get('prod/api')!.metadata.annotations!['example.com/x'] = 'y';
    expect(plan(desired, actual, OPTS)).toEqual([]);
  });

  it('recreates a Service whose type changed', () => {
    const desired = desiredFor(ENDPOINTS);
    const actual = storedCopy(desired);
    const live = actual.get('prod/api')!;
    live.spec = { ...live.spec, type: 'ClusterIP', clusterIP: '10.0.0.9' };
    const actions = plan(desired, actual, OPTS);
    expect(actions).toEqual([{ op: 'recreate', key: 'prod/api', desired: desired.get('prod/api'), live }]);
  });

  it('deletes owned Services that are not desired only when deletes are allowed', () => {
    const desired = desiredFor(ENDPOINTS);
    const actual = storedCopy(desiredFor([...ENDPOINTS, ep('ep_d', 'http://gone.prod', 4)]));
    const gone = [`${OPNS}/ep-d`, 'prod/gone'];
    expect(plan(desired, actual, OPTS).map((a) => [a.op, a.key])).toEqual(gone.map((k) => ['delete', k]));
    expect(plan(desired, actual, { ...OPTS, allowDeletes: false })).toEqual([]);
  });

  it('never creates, updates or deletes in a frozen (terminating) namespace', () => {
    const desired = desiredFor([...ENDPOINTS, ep('ep_d', 'http://new.staging', 4)]);
    const actual = storedCopy(desiredFor([...ENDPOINTS, ep('ep_e', 'http://old.staging', 5)]));
    actual.get('staging/web')!.spec!.externalName = 'drifted';
    const frozen = { allowDeletes: true, frozenNamespaces: new Set(['staging']) };
    expect(plan(desired, actual, frozen).map((a) => [a.op, a.key])).toEqual([
      ['create', `${OPNS}/ep-d`],
      ['delete', `${OPNS}/ep-e`],
    ]);
    const unfrozen = plan(desired, actual, OPTS).map((a) => [a.op, a.key]);
    expect(unfrozen).toEqual(
      expect.arrayContaining([
        ['create', 'staging/new'],
        ['update', 'staging/web'],
        ['delete', 'staging/old'],
      ]),
    );
  });
});

describe('writeOwnedFields', () => {
  it('fills apiVersion and kind when the live object lacks them', () => {
    const desired = desiredFor(ENDPOINTS).get('prod/api')!;
    const live = asStored(desired);
    delete live.apiVersion;
    delete live.kind;
    const out = writeOwnedFields(desired, live);
    expect(out.apiVersion).toBe('v1');
    expect(out.kind).toBe('Service');
    expect(out.status).toEqual({ loadBalancer: {} });
  });
});

describe('plan: Services being deleted', () => {
  const deleting = (s: Service): Service => ({
    ...s,
    metadata: { ...s.metadata, deletionTimestamp: '2026-01-01T00:00:00Z', finalizers: ['x.io/hold'] },
  });

  it('never deletes again, updates or re-creates a Service whose delete is held by a finalizer', () => {
    const desired = desiredFor([ep('ep_a', 'http://api.prod', 1)]);
    const stored = storedCopy(desired);
    const held = new Map([...stored].map(([k, s]) => [k, deleting(s)]));
    // Not desired any more: the accepted delete is waited on, not sent again.
    expect(plan(new Map(), held, OPTS)).toEqual([]);
    // Still desired but different: nothing is written until the name is free.
    const changed = desiredFor([ep('ep_a', 'http://api.prod:81', 1)]);
    expect(plan(changed, held, OPTS).filter((a) => held.has(a.key))).toEqual([]);
    // The same live objects without the deletionTimestamp are deleted as usual.
    const ops = plan(new Map(), stored, OPTS).map((a) => a.op);
    expect(ops).toEqual([...stored.keys()].map(() => 'delete'));
    expect(ops.length).toBeGreaterThan(0);
  });
});
