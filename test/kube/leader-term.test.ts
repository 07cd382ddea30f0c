import { afterEach, describe, expect, it } from 'vitest';
import type { MonotonicClock } from '../../src/time/clock.js';
import { decide, observe, type LeaderElectionRecord } from '../../src/kube/leader/record.js';
import { linkedSignal } from '../../src/kube/leader/signals.js';
import { LeadershipTerm } from '../../src/kube/leader/term.js';
import { World } from './leader-harness.js';

let world: World | undefined;
afterEach(() => {
  world?.close();
  world = undefined;
});

/** The same clock with other timers. */
function withSleep(clock: MonotonicClock, sleep: MonotonicClock['sleep']): MonotonicClock {
  return {
    now: () => clock.now(),
    monotonicNow: () => clock.monotonicNow(),
    random: () => clock.random(),
    sleep,
  };
}

function setup(): {
  w: World;
  clock: MonotonicClock;
  expired: number[];
  term: (until: number) => LeadershipTerm;
} {
  const w = new World();
  world = w;
  const clock = w.clock({ monoOffset: 7_000 });
  const expired: number[] = [];
  return {
    w,
    clock,
    expired,
    term: (until) => new LeadershipTerm(clock, until, () => expired.push(w.t)),
  };
}

describe('LeadershipTerm', () => {
  it('holds exactly until the deadline; its own timer ends it then, with reason lost', async () => {
    const { w, clock, expired, term } = setup();
    const t = term(clock.monotonicNow() + 2_000);
    await w.advance(1_999);
    expect(t.holds()).toBe(true);
    expect(t.remainingMs()).toBe(1);
    await w.advance(1);
    expect(t.signal.aborted).toBe(true);
    expect(t.signal.reason).toBe('lost');
    expect(expired).toEqual([2_000]);
    expect(t.holds()).toBe(false);
    expect(t.remainingMs()).toBe(0);
  });

  it('holds() has no side effects; active() ends an overdue term on the spot', async () => {
    const { w, clock, expired } = setup();
    // A clock whose timers never fire: only the exact checks can notice the deadline.
    const frozenTimers = withSleep(clock, () => new Promise<void>(() => undefined));
    const t = new LeadershipTerm(frozenTimers, clock.monotonicNow() + 1_000, () => expired.push(w.t));
    await w.advance(1_500);
    expect(t.holds()).toBe(false);
    expect(t.signal.aborted).toBe(false);
    expect(t.active()).toBe(false);
    expect(t.signal.aborted).toBe(true);
    expect(expired).toEqual([1_500]);
  });

  it('extend() moves the deadline; a success after the deadline does not revive the term', async () => {
    const { w, clock, expired, term } = setup();
    const t = term(clock.monotonicNow() + 2_000);
    await w.advance(1_500);
    expect(t.extend(clock.monotonicNow() + 2_000)).toBe(true);
    await w.advance(1_000); // past the first deadline: the old timer must not fire
    expect(t.holds()).toBe(true);
    await w.advance(1_000);
    expect(expired).toEqual([3_500]);
    expect(t.extend(clock.monotonicNow() + 2_000)).toBe(false);
    expect(t.holds()).toBe(false);
  });

  it('end(reason) stops at once without reporting an expiry', async () => {
    const { w, clock, expired, term } = setup();
    const t = term(clock.monotonicNow() + 2_000);
    t.end('released');
    expect(t.signal.reason).toBe('released');
    expect(t.holds()).toBe(false);
    await w.advance(3_000);
    expect(expired).toEqual([]);
  });

  it('a timer that fires early (by the monotonic clock) re-arms instead of ending the term', async () => {
    const { w, clock, expired } = setup();
    // Timers fire 10 % early, as a coarse timer might.
    const early = withSleep(clock, (ms, signal) => clock.sleep(ms * 0.9, signal));
    const t = new LeadershipTerm(early, clock.monotonicNow() + 2_000, () => expired.push(w.t));
    await w.advance(1_999);
    expect(t.signal.aborted).toBe(false);
    await w.advance(1);
    expect(t.holds()).toBe(false);
    await w.advance(1);
    expect(t.signal.aborted).toBe(true);
    expect(expired[0]).toBeGreaterThanOrEqual(2_000);
    expect(expired[0]).toBeLessThanOrEqual(2_001);
  });
});

describe('linkedSignal', () => {
  it('follows any parent, with its reason', () => {
    const p1 = new AbortController();
    const p2 = new AbortController();
    const l = linkedSignal([p1.signal, p2.signal]);
    p2.abort('because');
    expect(l.signal.aborted).toBe(true);
    expect(l.signal.reason).toBe('because');
    const pre = linkedSignal([p1.signal, AbortSignal.abort('already')]);
    expect(pre.signal.reason).toBe('already');
  });

  it('times out on the given clock with a TimeoutError', async () => {
    const w = new World();
    world = w;
    const clock = w.clock();
    const l = linkedSignal([], { clock, ms: 500, reason: 'no answer within 500 ms' });
    await w.advance(499);
    expect(l.signal.aborted).toBe(false);
    await w.advance(1);
    expect(l.signal.aborted).toBe(true);
    expect(l.signal.reason).toMatchObject({ name: 'TimeoutError', message: 'no answer within 500 ms' });
  });

  it('dispose() detaches from the parents and cancels the timer', async () => {
    const w = new World();
    world = w;
    const parent = new AbortController();
    const l = linkedSignal([parent.signal], { clock: w.clock(), ms: 100, reason: 'late' });
    l.dispose();
    parent.abort('after');
    await w.advance(200);
    expect(l.signal.aborted).toBe(false);
  });
});

describe('observing a lease', () => {
  const rec: LeaderElectionRecord = {
    holderIdentity: 'other',
    leaseDurationSeconds: 3,
    acquireTime: 't0',
    renewTime: 't1',
    leaseTransitions: 0,
  };
  it('a new resourceVersion restarts the countdown even if the record text repeats', () => {
    let o = observe(undefined, rec, 0, '10');
    o = observe(o, rec, 2_000, '10');
    expect(o.observedAt).toBe(0);
    o = observe(o, rec, 2_500, '11');
    expect(o.observedAt).toBe(2_500);
    expect(decide(o, 'me', 5_499, 3_000).action).toBe('follow');
    expect(decide(o, 'me', 5_500, 3_000).action).toBe('acquire');
  });
  it('stamps the record with wall time, decides on the monotonic clock', () => {
    const o = observe(undefined, { ...rec, holderIdentity: '' }, 100, '1');
    const d = decide(o, 'me', 101, 3_000, Date.UTC(2026, 0, 1));
    expect(d.action === 'acquire' && d.record.renewTime).toBe('2026-01-01T00:00:00.000000Z');
  });
});
