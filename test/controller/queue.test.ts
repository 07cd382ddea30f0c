import { describe, expect, it } from 'vitest';
import { ControllerQueue, PASS, parseItem, readItem, retryItem } from '../../src/controller/queue.js';
import { ManualClock } from '../helpers/manual-clock.js';

describe("the controller's work queue", () => {
  it('items name their kind and key', () => {
    expect(parseItem(PASS)).toEqual({ kind: 'pass' });
    expect(parseItem(readItem('prod/api'))).toEqual({ kind: 'read', key: 'prod/api' });
    expect(parseItem(retryItem('ops/ep-a'))).toEqual({ kind: 'retry', key: 'ops/ep-a' });
  });

  it('a pass follows a change at once, unless one started within 10 ms; changes meanwhile make one pass', async () => {
    const clock = new ManualClock();
    const q = new ControllerQueue(10, clock);
    q.requestPass();
    expect(q.length).toBe(1);
    expect(await q.get()).toBe(PASS);
    q.passStarted();
    q.done(PASS);
    await clock.advance(4);
    q.requestPass();
    q.requestPass();
    expect(q.length).toBe(0);
    await clock.advance(5);
    expect(q.length).toBe(0);
    await clock.advance(1);
    expect(q.length).toBe(1);
    expect(await q.get()).toBe(PASS);
    q.done(PASS);
    expect(q.length).toBe(0);
  });

  it('each kind backs off on its own curve: a write from 0.5 s, a read from 2 s, a failed pass from 1 s', () => {
    const clock = new ManualClock(0, 0);
    const q = new ControllerQueue(10, clock);
    expect([1, 2, 3].map(() => q.addRateLimited(retryItem('ops/a')))).toEqual([500, 1_000, 2_000]);
    expect([1, 2, 3].map(() => q.addRateLimited(readItem('prod/web')))).toEqual([2_000, 4_000, 8_000]);
    expect([1, 2].map(() => q.addRateLimited(PASS))).toEqual([1_000, 2_000]);
    for (let i = 0; i < 20; i++) q.addRateLimited(retryItem('ops/b'));
    expect(q.addRateLimited(retryItem('ops/b'))).toBe(300_000);
  });
});
