import { describe, expect, it } from 'vitest';
import {
  DEFAULT_DELETE_SAFETY,
  decideDeletes,
  isMassDelete,
  knowledgeAge,
  staleKnowledge,
  type DeleteFacts,
} from '../../src/binding/delete-guard.js';

const NOW = 1_000_000;
const base: DeleteFacts = {
  now: NOW,
  listing: { seq: 3, startedAt: NOW - 2_000, finishedAt: NOW - 1_000, generation: 2 },
  streamLive: true,
  generation: 2,
  termStartedAt: NOW - 10_000,
  deletes: 2,
  projections: 100,
  pending: undefined,
};

describe('delete rules (pure)', () => {
  it.each<[string, Partial<DeleteFacts>, string | true]>([
    ['fresh listing of this term, few deletes', {}, true],
    ['nothing to delete, even with no listing', { deletes: 0, listing: undefined }, true],
    ['no complete listing', { listing: undefined }, 'no-listing'],
    ['listing read under an earlier registration', { generation: 3 }, 'registration-changed'],
    [
      'listing from before this leadership term (a new leader)',
      { termStartedAt: NOW - 1_500 },
      'before-term',
    ],
    ['not leading at all (term never started)', { termStartedAt: Number.POSITIVE_INFINITY }, 'before-term'],
    [
      'notifications down and the listing older than the bound',
      {
        streamLive: false,
        listing: { seq: 3, startedAt: NOW - 200_000, finishedAt: NOW - 181_000, generation: 2 },
        termStartedAt: NOW - 300_000,
      },
      'stale',
    ],
    [
      'notifications down, listing within the bound',
      {
        streamLive: false,
        listing: { seq: 3, startedAt: NOW - 100_000, finishedAt: NOW - 90_000, generation: 2 },
        termStartedAt: NOW - 300_000,
      },
      true,
    ],
    ['21 of 100: a mass delete, unconfirmed', { deletes: 21 }, 'mass-delete'],
    ['9 of 10: below the minimum count', { deletes: 9, projections: 10 }, true],
    ['20 of 100: not above the share', { deletes: 20 }, true],
    [
      'confirmed: a later listing started after the delay',
      { deletes: 21, pending: { seq: 2, detectedAt: NOW - 2_000 - 5_000 } },
      true,
    ],
    [
      'not confirmed: the later listing started before the delay was over',
      { deletes: 21, pending: { seq: 2, detectedAt: NOW - 2_000 - 4_999 } },
      'mass-delete',
    ],
    [
      'not confirmed: the same listing that showed it',
      { deletes: 21, pending: { seq: 3, detectedAt: NOW - 60_000 } },
      'mass-delete',
    ],
  ])('%s', (_name, facts, expected) => {
    const v = decideDeletes({ ...base, ...facts }, DEFAULT_DELETE_SAFETY);
    if (expected === true) expect(v.allow).toBe(true);
    else expect(v).toMatchObject({ allow: false, reason: expected });
  });

  it('a mass delete names its counts and what to remember', () => {
    const v = decideDeletes({ ...base, deletes: 40 }, DEFAULT_DELETE_SAFETY);
    expect(v).toEqual({
      allow: false,
      reason: 'mass-delete',
      message: '40 of 100 Services would be deleted; waiting for a second complete listing to confirm',
      pending: { seq: 3, detectedAt: NOW },
    });
    const confirmed = decideDeletes(
      {
        ...base,
        deletes: 40,
        listing: { seq: 4, startedAt: NOW + 5_000, finishedAt: NOW + 5_100, generation: 2 },
        now: NOW + 5_100,
        pending: { seq: 3, detectedAt: NOW },
      },
      DEFAULT_DELETE_SAFETY,
    );
    expect(confirmed).toEqual({ allow: true, confirmed: true });
  });

  it('mass delete: above the share and at least the minimum', () => {
    expect(isMassDelete(10, 40, DEFAULT_DELETE_SAFETY)).toBe(true);
    expect(isMassDelete(10, 50, DEFAULT_DELETE_SAFETY)).toBe(false);
    expect(isMassDelete(9, 9, DEFAULT_DELETE_SAFETY)).toBe(false);
    expect(isMassDelete(10, 10, { ...DEFAULT_DELETE_SAFETY, massDeleteMin: 11 })).toBe(false);
  });

  it('knowledge age: 0 while notifications are live, else the listing age; none under another registration', () => {
    const k = { now: NOW, listing: base.listing, streamLive: true, generation: 2 };
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
