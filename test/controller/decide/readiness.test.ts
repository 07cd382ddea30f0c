import { describe, expect, it } from 'vitest';
import { decideReadiness, type ReadinessView } from '../../../src/controller/decide/readiness.js';

/**
 * The readiness ladder as a table: each rung's reason (and only it) from a view where just that
 * rung fails, the ready case, the order of several reasons, and which costly facts each verdict
 * asks for. What `/readyz` and `/status` answer is this function's result (controller.ts).
 */

/** A leader with bindings on, registered, synced, caught up, fresh, converged: ready. */
function view(over: Partial<ReadinessView> = {}): ReadinessView {
  return {
    registered: true,
    registrationError: undefined,
    bindingsEnabled: true,
    cachesSynced: true,
    unsyncedReasons: () => ['Services: never listed'],
    caughtUp: true,
    stale: () => undefined,
    leader: true,
    leaseHolder: 'replica-a',
    cannotLead: [],
    convergenceGap: () => ({ pending: 0 }),
    ...over,
  };
}

const rungs: { rung: string; over: Partial<ReadinessView>; reasons: string[] }[] = [
  { rung: 'ready', over: {}, reasons: [] },
  {
    rung: 'not registered yet',
    over: { registered: false },
    reasons: ['not registered with the management API yet'],
  },
  {
    rung: 'registration failed',
    over: { registered: false, registrationError: 'HTTP 401: the API key was refused' },
    reasons: ['not registered with the management API: HTTP 401: the API key was refused'],
  },
  {
    rung: 'caches not synced',
    over: { cachesSynced: false, unsyncedReasons: () => ['Services: listing', 'Namespaces: 403'] },
    reasons: [
      'caches of Services, Namespaces and the install record not synced yet (Services: listing; Namespaces: 403)',
    ],
  },
  {
    rung: 'no complete sync yet',
    over: { caughtUp: false },
    reasons: ['no complete sync of the endpoints applied (leader) or computed (follower) yet'],
  },
  {
    rung: 'stale knowledge',
    over: { stale: () => 'the last complete listing is 9m old and notifications are down' },
    reasons: ['the last complete listing is 9m old and notifications are down'],
  },
  {
    rung: 'cannot lead',
    over: { leader: false, cannotLead: ['operator namespace x does not exist', 'the Lease is stuck'] },
    reasons: ['cannot lead: operator namespace x does not exist', 'cannot lead: the Lease is stuck'],
  },
  {
    rung: 'planned, not observed',
    over: { convergenceGap: () => ({ pending: 2, example: 'https://a.example: Service missing' }) },
    reasons: [
      '2 endpoints planned but not yet observed in the cluster (e.g. https://a.example: Service missing)',
    ],
  },
];

describe('decideReadiness', () => {
  it.each(rungs)('$rung', ({ over, reasons }) => {
    const r = decideReadiness(view(over));
    expect(r.reasons).toEqual(reasons);
    expect(r.ok).toBe(reasons.length === 0);
  });

  it('the ready verdict carries the facts beside it', () => {
    expect(decideReadiness(view())).toEqual({
      ok: true,
      reasons: [],
      detail: {
        registered: true,
        cachesSynced: true,
        leader: true,
        leaseHolder: 'replica-a',
        caughtUp: true,
        pending: 0,
      },
    });
  });

  it('lists every failing rung, in the ladder order, with the facts', () => {
    const r = decideReadiness(
      view({
        registered: false,
        registrationError: 'connect ECONNREFUSED',
        cachesSynced: false,
        caughtUp: false,
        leader: false,
        leaseHolder: null,
        cannotLead: ['the Lease may not be read'],
      }),
    );
    expect(r.reasons).toEqual([
      'not registered with the management API: connect ECONNREFUSED',
      'caches of Services, Namespaces and the install record not synced yet (Services: never listed)',
      'no complete sync of the endpoints applied (leader) or computed (follower) yet',
      'cannot lead: the Lease may not be read',
    ]);
    expect(r.detail).toEqual({
      registered: false,
      registrationError: 'connect ECONNREFUSED',
      cachesSynced: false,
      leader: false,
      leaseHolder: null,
      caughtUp: false,
      pending: 0,
    });
  });

  it('a leader reports the planned projections the cluster does not show in the detail too', () => {
    const r = decideReadiness(view({ convergenceGap: () => ({ pending: 3, example: 'u: missing' }) }));
    expect(r.ok).toBe(false);
    expect(r.detail.pending).toBe(3);
  });

  it('a follower is not held back by what the leader has not written', () => {
    const asked: string[] = [];
    const r = decideReadiness(
      view({
        leader: false,
        convergenceGap: () => {
          asked.push('gap');
          return { pending: 5, example: 'u: missing' };
        },
      }),
    );
    expect(r).toMatchObject({ ok: true, reasons: [], detail: { pending: 0 } });
    expect(asked).toEqual([]);
  });

  it('with bindings off only registration counts, and no binding fact is asked', () => {
    const asked: string[] = [];
    const r = decideReadiness(
      view({
        bindingsEnabled: false,
        cachesSynced: false,
        caughtUp: false,
        cannotLead: ['the Lease may not be read'],
        unsyncedReasons: () => (asked.push('unsynced'), []),
        stale: () => (asked.push('stale'), 'stale'),
        convergenceGap: () => (asked.push('gap'), { pending: 1 }),
      }),
    );
    expect(r).toMatchObject({ ok: true, reasons: [] });
    expect(asked).toEqual([]);
    expect(decideReadiness(view({ bindingsEnabled: false, registered: false })).reasons).toEqual([
      'not registered with the management API yet',
    ]);
  });

  it('before the first complete sync neither staleness nor convergence is asked', () => {
    const asked: string[] = [];
    const r = decideReadiness(
      view({
        caughtUp: false,
        stale: () => (asked.push('stale'), 'stale'),
        convergenceGap: () => (asked.push('gap'), { pending: 1 }),
      }),
    );
    expect(r.reasons).toEqual([
      'no complete sync of the endpoints applied (leader) or computed (follower) yet',
    ]);
    expect(asked).toEqual([]);
  });

  it('synced caches are not asked why they are unsynced', () => {
    const asked: string[] = [];
    decideReadiness(view({ unsyncedReasons: () => (asked.push('unsynced'), []) }));
    expect(asked).toEqual([]);
  });
});
