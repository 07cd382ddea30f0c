import { describe, expect, it } from 'vitest';
import { TokenBucket } from '../../src/kube/events/token-bucket.js';

describe('TokenBucket (Normal Event rate limit)', () => {
  it('allows a burst, then refills at the given rate, never above the burst', () => {
    let t = 0;
    const b = new TokenBucket(3, 2, () => t);
    expect([b.take(), b.take(), b.take(), b.take()]).toEqual([true, true, true, false]);
    t += 500; // one token back at 2/s
    expect([b.take(), b.take()]).toEqual([true, false]);
    t += 60_000;
    expect([b.take(), b.take(), b.take(), b.take()]).toEqual([true, true, true, false]);
  });
});
