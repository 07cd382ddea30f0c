import { describe, expect, it } from 'vitest';
import {
  awaitsListing,
  deletesHeld,
  deletesSettled,
  initialMemory,
  nameNoted,
  passPlanned,
  passRunning,
  recheckWanted,
  recordFullHeld,
  retryDue,
  type ReconcilerMemory,
} from '../../../src/controller/decide/reconciler-memory.js';
import type { NameRecord } from '../../../src/controller/decide/name-lookup.js';
import type { Service } from '../../../src/kube/objects.js';

const m0 = initialMemory();
const withMemory = (patch: Partial<ReconcilerMemory>): ReconcilerMemory => ({ ...m0, ...patch });
const svcWithUid = (uid: string): Service => ({ metadata: { name: 'x', namespace: 'ops', uid } });
const failing = (resting: boolean) => new Map([['ops/a', { message: 'forbidden', resting }]]);

describe('decide/reconciler-memory: the transitions between passes', () => {
  it.each([
    { heldDeletes: 0, running: false, awaits: false },
    { heldDeletes: 0, running: true, awaits: true },
    { heldDeletes: 3, running: false, awaits: true },
  ])(
    'awaitsListing: $heldDeletes deletes held, pass running $running → $awaits',
    ({ heldDeletes, running, awaits }) => {
      expect(awaitsListing(passRunning(withMemory({ heldDeletes }), running))).toBe(awaits);
    },
  );

  it.each([
    { name: 'a resting failure', failures: failing(true), resting: false, queue: [{ op: 'requestPass' }] },
    { name: 'no failure at that key', failures: new Map(), resting: undefined, queue: [] },
  ])('retryDue on $name', ({ failures, resting, queue }) => {
    const before = withMemory({ failures });
    const step = retryDue(before, 'ops/a');
    expect(step.memory.failures.get('ops/a')?.resting).toBe(resting);
    expect(step.queue).toEqual(queue);
    // The value before is untouched (transitions copy).
    if (failures.size > 0) expect(before.failures.get('ops/a')?.resting).toBe(true);
  });

  it.each([
    { name: 'the cache still shows the deleted object', live: 'u1', kept: true, uid: 'u1' },
    { name: 'another object stands there now', live: 'u2', kept: false, uid: 'u1' },
    { name: 'the object is gone', live: undefined, kept: false, uid: undefined },
  ])('deletesSettled when $name', ({ live, kept, uid }) => {
    const before = withMemory({ deletedKept: new Set(['ops/a']), writtenUids: new Map([['ops/a', 'u1']]) });
    const owned = new Map(live ? [['ops/a', svcWithUid(live)]] : []);
    const after = deletesSettled(before, owned);
    expect(after.deletedKept.has('ops/a')).toBe(kept);
    expect(after.writtenUids.get('ops/a')).toBe(uid);
    expect(before.deletedKept.has('ops/a')).toBe(true);
  });

  it('deletesSettled with nothing kept returns the same value', () => {
    expect(deletesSettled(m0, new Map())).toBe(m0);
  });

  it('deletesHeld logs when the held set changes (by size and first key), not on every pass', () => {
    const held = (...keys: string[]) => new Map(keys.map((k) => [k, ['ep_1']]));
    const passes = [held('prod/a'), held('prod/a'), held('prod/a', 'prod/b'), held(), held('prod/a')];
    let m = m0;
    const logged: number[] = [];
    for (const h of passes) {
      const step = deletesHeld(m, h, ['ep_1']);
      m = step.memory;
      logged.push(step.log.length);
      expect(m.heldDeletes).toBe(h.size);
    }
    expect(logged).toEqual([1, 0, 1, 0, 1]);
    expect(deletesHeld(m0, held('prod/a'), ['ep_1']).log[0]).toEqual({
      level: 'info',
      fields: { deletes: 1, services: ['prod/a'], endpoints: ['ep_1'] },
      msg: 'deletes deferred: endpoint absence not proven yet',
    });
  });

  it('passPlanned counts the pass and ends the failures the plan no longer writes, forgetting their backoff', () => {
    const failures = new Map([
      ['ops/a', { message: 'x', resting: true }],
      ['ops/b', { message: 'y', resting: false }],
    ]);
    const step = passPlanned(withMemory({ failures, passes: 4 }), new Set(['ops/b']));
    expect(step.memory.passes).toBe(5);
    expect([...step.memory.failures.keys()]).toEqual(['ops/b']);
    expect(step.queue).toEqual([{ op: 'forget', item: 'retry:ops/a' }]);
  });

  it.each([
    { name: 'becomes full', before: [], held: ['ep-a'], logs: 1 },
    { name: 'stays full', before: ['ep-a'], held: ['ep-a', 'ep-b'], logs: 0 },
    { name: 'has room again', before: ['ep-a'], held: [], logs: 0 },
  ])('recordFullHeld: the record $name → $logs error line(s)', ({ before, held, logs }) => {
    const step = recordFullHeld(withMemory({ recordFull: new Set(before) }), new Set(held), 20_000);
    expect([...step.memory.recordFull]).toEqual(held);
    expect(step.log).toHaveLength(logs);
    if (logs) expect(step.log[0]).toMatchObject({ level: 'error', fields: { held: 1, max: 20_000 } });
  });

  const rec = (holder: NameRecord['holder'], detail?: string): NameRecord => ({
    holder,
    checkedAt: 0,
    ...(detail ? { detail } : {}),
  });
  it.each([
    { name: 'free', before: undefined, after: rec('free'), detail: undefined, op: 'forget', warns: 0 },
    {
      name: 'foreign',
      before: undefined,
      after: rec('foreign'),
      detail: undefined,
      op: 'addRateLimited',
      warns: 0,
    },
    {
      name: 'unread',
      before: undefined,
      after: rec('unread'),
      detail: undefined,
      op: 'addRateLimited',
      warns: 0,
    },
    {
      name: 'foreign, newly for a lost label',
      before: rec('foreign'),
      after: rec('foreign', 'lost managed-by'),
      detail: 'lost managed-by',
      op: 'addRateLimited',
      warns: 1,
    },
    {
      name: 'foreign, the same lost label again',
      before: rec('foreign', 'lost managed-by'),
      after: rec('foreign', 'lost managed-by'),
      detail: 'lost managed-by',
      op: 'addRateLimited',
      warns: 0,
    },
  ])('nameNoted: a name read $name → $op, $warns warning(s)', ({ before, after, detail, op, warns }) => {
    const e = nameNoted('prod/web', before, after, detail);
    expect(e.queue).toEqual([{ op, item: 'read:prod/web' }]);
    expect(e.log).toHaveLength(warns);
  });

  it.each([
    { wanted: ['prod/web'], key: 'prod/web', read: true, queue: [] },
    { wanted: ['prod/web'], key: 'prod/old', read: false, queue: [{ op: 'forget', item: 'read:prod/old' }] },
  ])(
    'recheckWanted: $key when the last pass asked about $wanted → read $read',
    ({ wanted, key, read, queue }) => {
      expect(recheckWanted(withMemory({ wanted: new Set(wanted) }), key)).toEqual({ read, queue });
    },
  );
});
