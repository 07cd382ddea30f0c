import { describe, expect, it } from 'vitest';
import { nameRead, type NameRecord } from '../../../src/controller/decide/name-lookup.js';
import {
  overlayPending,
  PENDING_MAX_MS,
  type PendingWrite,
} from '../../../src/controller/decide/pending-writes.js';
import type { Service } from '../../../src/kube/objects.js';

const KEY = 'prod/api';
const at = (rv: string, uid = 'u1'): Service => ({
  metadata: { name: 'api', namespace: 'prod', uid, resourceVersion: rv },
});
const wrote = (rv: string, when = 0): PendingWrite => ({
  object: at(rv),
  deletedResourceVersion: undefined,
  at: when,
});
const deleted = (rv: string, when = 0): PendingWrite => ({
  object: null,
  deletedResourceVersion: rv,
  at: when,
});

describe('decide/pending-writes: a write stands over the cache until the watch shows it', () => {
  it.each([
    {
      name: 'a write the cache shows (same rv)',
      cached: '7',
      watchedTo: '7',
      w: wrote('7'),
      now: 1,
      over: true,
      shows: '7',
    },
    {
      name: 'a write the cache is past',
      cached: '9',
      watchedTo: '9',
      w: wrote('7'),
      now: 1,
      over: true,
      shows: '9',
    },
    {
      name: 'a write the cache is provably behind',
      cached: '5',
      watchedTo: '6',
      w: wrote('7'),
      now: 1,
      over: false,
      shows: '7',
    },
    {
      name: 'a create the watch has not reached',
      cached: undefined,
      watchedTo: '6',
      w: wrote('7'),
      now: 1,
      over: false,
      shows: '7',
    },
    {
      name: 'a provably-behind write after the TTL',
      cached: '5',
      watchedTo: '6',
      w: wrote('7'),
      now: 60_000,
      over: false,
      shows: '7',
    },
    {
      name: 'a provably-behind write after 10 minutes',
      cached: '5',
      watchedTo: '6',
      w: wrote('7'),
      now: PENDING_MAX_MS + 1,
      over: true,
      shows: '5',
    },
    {
      name: 'a write with opaque rvs after the TTL',
      cached: 'a',
      watchedTo: 'b',
      w: wrote('c'),
      now: 30_001,
      over: true,
      shows: 'a',
    },
    {
      name: 'a delete the watch shows',
      cached: undefined,
      watchedTo: '9',
      w: deleted('5'),
      now: 1,
      over: true,
      shows: undefined,
    },
    {
      name: 'a delete the cache still shows',
      cached: '5',
      watchedTo: '5',
      w: deleted('5'),
      now: 1,
      over: false,
      shows: undefined,
    },
    {
      name: 'a delete, then a newer object there',
      cached: '8',
      watchedTo: '8',
      w: deleted('5'),
      now: 1,
      over: true,
      shows: '8',
    },
  ])('$name → over $over', ({ cached, watchedTo, w, now, over, shows }) => {
    const owned = new Map(cached ? [[KEY, at(cached)]] : []);
    const done = overlayPending(owned, new Map([[KEY, w]]), { watchedTo, now, pendingTtlMs: 30_000 });
    expect(done).toEqual(over ? [KEY] : []);
    expect(owned.get(KEY)?.metadata.resourceVersion).toBe(shows);
  });
});

describe('decide/name-lookup nameRead: what one more read of a name tells', () => {
  const t = (holder: NameRecord['holder'], extra: Partial<NameRecord> = {}): NameRecord => ({
    holder,
    checkedAt: 1,
    ...extra,
  });
  it.each([
    {
      name: 'first seen foreign',
      prev: undefined,
      holder: 'foreign',
      record: t('foreign', { checkedAt: 5, foreignSince: 5, foreignLastSeen: 5 }),
      changed: true,
    },
    {
      name: 'still foreign',
      prev: t('foreign', { foreignSince: 1, foreignLastSeen: 1 }),
      holder: 'foreign',
      record: t('foreign', { checkedAt: 5, foreignSince: 1, foreignLastSeen: 5 }),
      changed: false,
    },
    {
      name: 'freed',
      prev: t('foreign', { foreignSince: 1, foreignLastSeen: 1 }),
      holder: 'free',
      record: t('free', { checkedAt: 5, foreignSince: 1, foreignLastSeen: 1, freedAt: 5 }),
      changed: true,
    },
    {
      name: 'a failed read of a foreign name',
      prev: t('foreign', { foreignSince: 1, foreignLastSeen: 1 }),
      holder: 'unread',
      record: t('foreign', { checkedAt: 5, foreignSince: 1, foreignLastSeen: 1 }),
      changed: false,
    },
    {
      name: 'a failed first read',
      prev: undefined,
      holder: 'unread',
      record: t('unread', { checkedAt: 5 }),
      changed: true,
    },
  ] as const)('$name', ({ prev, holder, record, changed }) => {
    expect(nameRead(prev, holder, 5)).toEqual({ record, changed });
  });

  it('a reason why the holder is not ours is kept while foreign and dropped once free', () => {
    const lost = nameRead(undefined, 'foreign', 1, 'lost managed-by');
    expect(lost.record.detail).toBe('lost managed-by');
    expect(nameRead(lost.record, 'foreign', 2, 'lost managed-by').changed).toBe(false);
    expect(nameRead(lost.record, 'free', 3).record.detail).toBeUndefined();
  });
});
