import { describe, expect, it } from 'vitest';
import { needsUpdate, plan } from '../../src/binding/plan.js';
import { project } from '../../src/binding/project.js';
import { EXTRA_KEYS_ANNOTATION, parseExtraKeys } from '../../src/binding/services.js';
import type { NamespacePhase, ProjectionConfig } from '../../src/binding/types.js';
import type { Service } from '../../src/kube/objects.js';
import { OPNS, asStored, config, seeded } from './helpers.js';

/** Issue #20: extra labels and annotations dropped from the config leave the projected Services. */

const ENDPOINTS = [{ id: 'ep_a', url: 'http://api.prod', created_at: '2026-01-01T00:01:00Z' }];
const OPTS = { allowDeletes: true, frozenNamespaces: new Set<string>() };

function desired(cfg: ProjectionConfig): Map<string, Service> {
  return project({
    endpoints: ENDPOINTS,
    select: () => ({ selected: true }),
    cluster: {
      owned: [],
      namespaces: new Map<string, NamespacePhase>([
        [OPNS, 'Active'],
        ['prod', 'Active'],
      ]),
      foreign: new Set(),
    },
    config: cfg,
    random: seeded(4),
  }).services;
}

/** The cluster after applying a plan: every create and update as the API server stores it. */
function apply(want: Map<string, Service>, live: Map<string, Service>): Map<string, Service> {
  const out = new Map(live);
  for (const a of plan(want, live, OPTS)) {
    if (a.op === 'create') out.set(a.key, asStored(a.desired));
    else if (a.op === 'update') out.set(a.key, a.object);
    else if (a.op === 'delete') out.delete(a.key);
  }
  return out;
}

const WIDE = config({
  serviceLabels: { team: 'web', tier: 'front', 'app.kubernetes.io/managed-by': 'helm' },
  serviceAnnotations: { note: 'a', owner: 'ops' },
});
const NARROW = config({ serviceLabels: { team: 'web' }, serviceAnnotations: { owner: 'ops' } });

describe('extra labels and annotations across config changes', () => {
  it('records on each Service which extra keys it applied (not the ones ours overrode)', () => {
    for (const svc of desired(WIDE).values()) {
      expect(parseExtraKeys(svc.metadata.annotations?.[EXTRA_KEYS_ANNOTATION])).toEqual({
        labels: ['team', 'tier'],
        annotations: ['note', 'owner'],
      });
    }
    // No extras: no record.
    for (const svc of desired(config()).values())
      expect(svc.metadata.annotations).not.toHaveProperty(EXTRA_KEYS_ANNOTATION);
  });

  it('removes keys dropped from the config, keeps the rest and foreign keys, and adds them back on rollback', () => {
    let live = apply(desired(WIDE), new Map());
    expect(live.size).toBe(2);
    // Someone else's keys on our Services stay.
    for (const svc of live.values()) {
      svc.metadata.labels!['someone.else/label'] = 'x';
      svc.metadata.annotations!['someone.else/note'] = 'y';
    }
    const narrow = desired(NARROW);
    for (const [k, svc] of live) expect(needsUpdate(narrow.get(k)!, svc), k).toBe(true);
    live = apply(narrow, live);
    for (const [k, svc] of live) {
      expect(svc.metadata.labels, k).toMatchObject({ team: 'web', 'someone.else/label': 'x' });
      expect(svc.metadata.labels, k).not.toHaveProperty('tier');
      expect(svc.metadata.annotations, k).toMatchObject({ owner: 'ops', 'someone.else/note': 'y' });
      expect(svc.metadata.annotations, k).not.toHaveProperty('note');
      expect(parseExtraKeys(svc.metadata.annotations?.[EXTRA_KEYS_ANNOTATION])).toEqual({
        labels: ['team'],
        annotations: ['owner'],
      });
    }
    // A second pass changes nothing.
    expect(plan(narrow, live, OPTS)).toEqual([]);
    // Rollback: the wide config again.
    live = apply(desired(WIDE), live);
    for (const svc of live.values()) expect(svc.metadata.labels).toMatchObject({ tier: 'front' });
    // Every extra dropped: the keys and the record go.
    live = apply(desired(config()), live);
    for (const svc of live.values()) {
      expect(Object.keys(svc.metadata.labels!).filter((k) => ['team', 'tier'].includes(k))).toEqual([]);
      expect(svc.metadata.annotations).not.toHaveProperty(EXTRA_KEYS_ANNOTATION);
      expect(svc.metadata.annotations).not.toHaveProperty('owner');
      expect(svc.metadata.labels).toHaveProperty('someone.else/label', 'x');
    }
  });

  it('leaves keys alone that a Service without a record carries (written before the record existed)', () => {
    const old = new Map(
      [...desired(WIDE)].map(([k, s]) => {
        const copy = asStored(s);
        delete copy.metadata.annotations![EXTRA_KEYS_ANNOTATION];
        return [k, copy];
      }),
    );
    const after = apply(desired(NARROW), old);
    for (const svc of after.values()) expect(svc.metadata.labels).toHaveProperty('tier', 'front');
  });

  it('reads a record it cannot parse as none', () => {
    expect(parseExtraKeys('not json')).toEqual({ labels: [], annotations: [] });
    expect(parseExtraKeys('{"labels":"x"}')).toEqual({ labels: [], annotations: [] });
    expect(parseExtraKeys(undefined)).toEqual({ labels: [], annotations: [] });
  });
});
