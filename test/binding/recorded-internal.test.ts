import { describe, expect, it } from 'vitest';
import { applyRecordedChange, recordedInternalChange } from '../../src/binding/ownership/index.js';

const set = (...u: string[]): Set<string> => new Set(u);

describe('recordedInternalChange: the leader changes the list of internal Services it created', () => {
  const base = {
    present: set(),
    trusted: set(),
    deleted: set(),
    absentSince: new Map<string, number>(),
    now: 1_000,
  };

  it('lists what it trusts or wrote, unlists what it deleted, and writes nothing when nothing changed', () => {
    const r = recordedInternalChange({
      ...base,
      recorded: set('a', 'b'),
      present: set('a', 'b', 'c'),
      trusted: set('a', 'b', 'c'),
      deleted: set('b', 'x'),
    });
    expect(r).toMatchObject({ changed: true, add: ['c'], remove: ['b', 'x'] });
    const same = recordedInternalChange({
      ...base,
      recorded: set('a'),
      present: set('a'),
      trusted: set('a'),
    });
    expect(same).toMatchObject({ changed: false, add: [], remove: [] });
  });

  it('no list yet (an upgrade): lists every labelled internal Service present, even none', () => {
    expect(
      recordedInternalChange({ ...base, recorded: undefined, present: set('a'), trusted: set('a') }),
    ).toMatchObject({
      changed: true,
      add: ['a'],
    });
    expect(recordedInternalChange({ ...base, recorded: undefined })).toMatchObject({
      changed: true,
      add: [],
    });
  });

  it('keeps a listed uid the cache does not show for the grace (a lagging watch), then unlists it', () => {
    const first = recordedInternalChange({
      ...base,
      recorded: set('a', 'gone'),
      present: set('a'),
      trusted: set('a'),
      graceMs: 500,
    });
    expect(first).toMatchObject({ changed: false, remove: [] });
    expect([...first.absentSince]).toEqual([['gone', 1_000]]);
    const later = recordedInternalChange({
      ...base,
      recorded: set('a', 'gone'),
      present: set('a'),
      trusted: set('a'),
      absentSince: first.absentSince,
      now: 1_499,
      graceMs: 500,
    });
    expect(later.remove).toEqual([]);
    const after = recordedInternalChange({
      ...base,
      recorded: set('a', 'gone'),
      present: set('a'),
      trusted: set('a'),
      absentSince: later.absentSince,
      now: 1_500,
      graceMs: 500,
    });
    expect(after).toMatchObject({ changed: true, remove: ['gone'] });
    // Back in the cache before the grace ran out: forgotten as absent.
    const back = recordedInternalChange({
      ...base,
      recorded: set('gone'),
      present: set('gone'),
      absentSince: first.absentSince,
      now: 1_200,
      graceMs: 500,
    });
    expect(back.absentSince.size).toBe(0);
  });

  it('applies a change to the list read fresh (a predecessor’s newer entries stay), capped', () => {
    expect(applyRecordedChange(['a', 'old-leader-added'], { add: ['c'], remove: ['a'] })).toEqual({
      uids: ['c', 'old-leader-added'],
      dropped: 0,
    });
    expect(applyRecordedChange(undefined, { add: ['b', 'a', 'c'], remove: [] }, 2)).toEqual({
      uids: ['a', 'b'],
      dropped: 1,
    });
  });
});
