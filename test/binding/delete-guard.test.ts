import { describe, expect, it } from 'vitest';
import {
  knowledgeAge,
  provenDeletes,
  staleKnowledge,
  type DeleteProofFacts,
} from '../../src/binding/delete-guard.js';
import type { Service } from '../../src/kube/objects.js';
import type { PlanAction } from '../../src/binding/types.js';

const NOW = 1_000_000;
const listing = { seq: 3, startedAt: NOW - 2_000, finishedAt: NOW - 1_000, generation: 2 };

const live = (namespace: string, name: string, ids: string[]): Service => ({
  metadata: { namespace, name, annotations: { ids: ids.join(',') } },
});
const del = (svc: Service): PlanAction => ({
  op: 'delete',
  key: `${svc.metadata.namespace}/${svc.metadata.name}`,
  live: svc,
});
const facts = (over: Partial<DeleteProofFacts> = {}): DeleteProofFacts => ({
  operatorNamespace: 'ops',
  held: new Set(),
  provenGone: new Set(),
  fresh: true,
  servedIds: (s) => (s.metadata.annotations?.['ids'] ?? '').split(',').filter(Boolean),
  closedNamespace: (ns) =>
    ns === 'closed' ? 'namespace "closed" matches the deny entry "closed"' : undefined,
  policyNamespace: (s) => s.metadata.annotations?.['ns'] ?? s.metadata.namespace,
  ...over,
});

describe('deletes stand only on a per-endpoint proof (pure)', () => {
  const internal = live('ops', 'ep-a', ['ep_a']);
  const alias = live('prod', 'api', ['ep_a', 'ep_b']);

  it('an id neither held nor proven gone holds the delete and is nominated', () => {
    const r = provenDeletes([del(internal), del(alias)], facts());
    expect(r.actions).toEqual([]);
    expect([...r.held.keys()]).toEqual(['ops/ep-a', 'prod/api']);
    expect(r.nominate.sort()).toEqual(['ep_a', 'ep_b']);
  });

  it('proven gone or held (deselected by this replica) lets the delete stand', () => {
    const r = provenDeletes(
      [del(internal), del(alias)],
      facts({ provenGone: new Set(['ep_a']), held: new Set(['ep_b']) }),
    );
    expect(r.actions.map((a) => a.key)).toEqual(['ops/ep-a', 'prod/api']);
    expect(r.nominate).toEqual([]);
  });

  it('one unproven member of a group holds the alias delete', () => {
    const r = provenDeletes([del(alias)], facts({ provenGone: new Set(['ep_a']) }));
    expect(r.actions).toEqual([]);
    expect(r.held.get('prod/api')).toEqual(['ep_b']);
  });

  it('stale knowledge holds deselections, never proven absences', () => {
    const r = provenDeletes(
      [del(internal), del(live('ops', 'ep-c', ['ep_c']))],
      facts({ fresh: false, held: new Set(['ep_a']), provenGone: new Set(['ep_c']) }),
    );
    expect(r.actions.map((a) => a.key)).toEqual(['ops/ep-c']);
    expect(r.nominate).toEqual([]);
  });

  it('an alias in a namespace the policy closes, and the internal Service of an endpoint there, go on that cluster fact alone', () => {
    const internal = live('ops', 'ep-x', ['ep_x']);
    internal.metadata.annotations!['ns'] = 'closed';
    const r = provenDeletes([del(live('closed', 'api', ['ep_x'])), del(internal)], facts({ fresh: false }));
    expect(r.actions.map((a) => a.key)).toEqual(['closed/api', 'ops/ep-x']);
  });

  it('creates and updates pass through untouched', () => {
    const create: PlanAction = { op: 'create', key: 'ops/ep-n', desired: live('ops', 'ep-n', []) };
    expect(provenDeletes([create], facts()).actions).toEqual([create]);
  });
});

describe('knowledge freshness (readiness)', () => {
  it('knowledge age: 0 while notifications are live, else the listing age; none under another registration', () => {
    const k = { now: NOW, listing, streamLive: true, generation: 2 };
    expect(knowledgeAge(k)).toBe(0);
    expect(knowledgeAge({ ...k, streamLive: false })).toBe(1_000);
    expect(knowledgeAge({ ...k, generation: 3 })).toBeUndefined();
    expect(staleKnowledge({ ...k, streamLive: false, now: NOW + 179_000 }, 180_000)).toBeUndefined();
    expect(staleKnowledge({ ...k, streamLive: false, now: NOW + 190_000 }, 180_000)).toBe(
      'endpoint knowledge is 191 s old (notifications down, last complete listing 191 s ago; bound 180 s)',
    );
    expect(staleKnowledge({ ...k, listing: undefined }, 180_000)).toBe(
      'no complete listing of the endpoints yet',
    );
    expect(staleKnowledge({ ...k, generation: 3 }, 180_000)).toMatch(/registration changed/);
  });
});
