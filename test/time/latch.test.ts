import { describe, expect, it } from 'vitest';
import { Latch, once, unlessAborted } from '../../src/time/latch.js';

/** What a promise has done after the microtasks queued now have run. */
async function settled<T>(p: Promise<T>): Promise<string> {
  const seen = await Promise.race([
    p.then(
      (v) => `resolved ${String(v)}`,
      (e: unknown) => `rejected ${e instanceof Error ? e.message : String(e)}`,
    ),
    new Promise<string>((r) => setImmediate(() => r('pending'))),
  ]);
  return seen;
}

describe('Latch', () => {
  it('stays pending until resolved, then keeps the first value', async () => {
    const latch = new Latch<number>();
    expect(await settled(latch.promise), 'before resolve').toBe('pending');
    latch.resolve(1);
    latch.resolve(2);
    expect(await settled(latch.promise), 'after resolve(1), resolve(2)').toBe('resolved 1');
  });
});

describe('unlessAborted', () => {
  it('without a signal is the promise itself', () => {
    const p = Promise.resolve(3);
    expect(unlessAborted(p)).toBe(p);
  });

  it('rejects with "aborted" when the signal aborts first', async () => {
    const latch = new Latch();
    const ctl = new AbortController();
    const waited = unlessAborted(latch.promise, ctl.signal);
    expect(await settled(waited), 'before the abort').toBe('pending');
    ctl.abort();
    expect(await settled(waited), 'after the abort').toBe('rejected aborted');
  });

  it('resolves with the value when the promise settles first', async () => {
    const latch = new Latch<string>();
    const ctl = new AbortController();
    const waited = unlessAborted(latch.promise, ctl.signal);
    latch.resolve('done');
    expect(await settled(waited)).toBe('resolved done');
    ctl.abort();
    expect(await settled(waited), 'an abort after it resolved changes nothing').toBe('resolved done');
  });
});

describe('once', () => {
  it('runs the function on the first call only and returns its result every time', () => {
    let calls = 0;
    const stop = once(() => ({ call: ++calls }));
    const first = stop();
    expect(stop(), 'the second call').toBe(first);
    expect(calls, 'times the function ran').toBe(1);
  });

  it('remembers an undefined result too (the function still runs once)', () => {
    let calls = 0;
    const f = once(() => {
      calls++;
      return undefined;
    });
    f();
    f();
    expect(calls).toBe(1);
  });
});
