import { describe, expect, it } from 'vitest';
import { proveOwnership, resolvedIntents, unprovenReason } from '../../src/binding/ownership/index.js';
import { allocatePorts } from '../../src/binding/ports.js';
import { project } from '../../src/binding/project.js';
import type { Service } from '../../src/kube/objects.js';
import { OPNS, config } from './helpers.js';

const svc = (namespace: string, name: string, role: string, uid: string, annotations = {}): Service => ({
  metadata: { namespace, name, uid, labels: { 'endpoint-binder.io/role': role }, annotations },
});
const keys = (list: readonly Service[]) => list.map((s) => `${s.metadata.namespace}/${s.metadata.name}`);

describe('ownership: write-ahead entries prove what a dead leader created (issue #30 item 1)', () => {
  const internal = svc(OPNS, 'ep-a', 'internal', 'u-int', {
    'endpoint-binder.io/endpoint-url': 'http://api.prod:80',
  });
  const alias = svc('prod', 'api', 'alias', 'u-alias');

  it('an internal Service and an alias listed by name in the record are proven, uids unlisted', () => {
    const record = { uids: new Set<string>(), intents: new Set([`${OPNS}/ep-a`, 'prod/api']) };
    const r = proveOwnership([internal, alias], OPNS, record, () => false);
    expect(keys(r.trusted)).toEqual([`${OPNS}/ep-a`, 'prod/api']);
    expect(r.unanchored).toEqual([]);
  });

  it('without a uid or an entry the same Services prove nothing', () => {
    const r = proveOwnership([internal, alias], OPNS, { uids: new Set(), intents: new Set() }, () => false);
    expect(keys(r.unanchored)).toEqual([`${OPNS}/ep-a`, 'prod/api']);
  });

  it('an entry is dropped in the write that records a stronger proof, or after its name stayed empty', () => {
    const recorded = {
      ...internal,
      metadata: {
        ...internal.metadata,
        annotations: { ...internal.metadata.annotations, 'endpoint-binder.io/alias': 'prod/api/u-alias' },
      },
    };
    const present = new Map([
      [`${OPNS}/ep-a`, recorded],
      ['prod/api', alias],
    ]);
    const intents = new Set([`${OPNS}/ep-a`, 'prod/api', `${OPNS}/ep-gone`]);
    const first = resolvedIntents({
      intents,
      present,
      trusted: [recorded, alias],
      operatorNamespace: OPNS,
      absentSince: new Map(),
      now: 0,
      graceMs: 1000,
    });
    expect(first.remove).toEqual([`${OPNS}/ep-a`, 'prod/api']);
    expect([...first.absentSince.keys()]).toEqual([`${OPNS}/ep-gone`]);
    const later = resolvedIntents({
      intents,
      present,
      trusted: [recorded, alias],
      operatorNamespace: OPNS,
      absentSince: first.absentSince,
      now: 1000,
      graceMs: 1000,
    });
    expect(later.remove).toContain(`${OPNS}/ep-gone`);
  });

  it('an alias entry stays while no proven internal Service records its uid', () => {
    const r = resolvedIntents({
      intents: new Set(['prod/api']),
      present: new Map([['prod/api', alias]]),
      trusted: [internal, alias],
      operatorNamespace: OPNS,
      absentSince: new Map(),
      now: 0,
    });
    expect(r.remove).toEqual([]);
  });
});

describe('unproven Services: their ports are held, their endpoints are `unproven`', () => {
  it('a port an unproven Service names is given to no other URL', () => {
    const held = [{ url: 'http://old.prod:80', port: 10000, service: { namespace: OPNS, name: 'ep-old' } }];
    // Every random draw lands on 10000 first.
    const r = allocatePorts({
      urls: ['http://new.prod:80'],
      claims: [],
      held,
      range: { min: 10000, max: 10001 },
      random: () => 0,
    });
    expect(r.ports.get('http://new.prod:80')).toBe(10001);
    const full = allocatePorts({
      urls: ['http://new.prod:80'],
      claims: [],
      held,
      range: { min: 10000, max: 10000 },
      random: () => 0,
    });
    expect(full.exhausted).toEqual(['http://new.prod:80']);
  });

  it('an endpoint whose internal name is held by an unproven Service of ours is `unproven` with the fix, not name-conflict', () => {
    const stale = svc(OPNS, 'ep-a', 'internal', 'u-stale');
    const d = project({
      endpoints: [{ id: 'ep_a', url: 'http://api.prod', created_at: '2026-01-01T00:00:00Z' }],
      select: () => ({ selected: true }),
      cluster: {
        owned: [],
        namespaces: new Map([['prod', 'Active']]),
        foreign: new Set([`${OPNS}/ep-a`]),
        unproven: new Map([[`${OPNS}/ep-a`, unprovenReason(stale)]]),
        unprovenInternal: [stale],
      },
      config: config(),
      random: () => 0,
    });
    expect(d.statuses[0]?.state).toBe('unproven');
    expect(d.statuses[0]?.reason).toMatch(/kubectl -n endpoint-binder delete service ep-a/);
    expect(d.services.size).toBe(0);
  });
});
