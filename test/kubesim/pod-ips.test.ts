import { describe, expect, it } from 'vitest';
import { PodIpPool } from '../../src/kubesim/workloads/pod-ips.js';

describe('kubesim pod IP pool', () => {
  it('starts where its random source says, so two kubesims on one host do not hand out the same first address', () => {
    expect(new PodIpPool(() => 0).take()).toBe('127.1.1.1');
    expect(new PodIpPool(() => 0.5).take()).toBe('127.128.1.1');
    const a = new PodIpPool(() => 0.1).take();
    const b = new PodIpPool(() => 0.7).take();
    expect(a).not.toBe(b);
  });

  it('spreads over the last three octets: 16 million addresses, none in 127.0.x.x', () => {
    const pool = new PodIpPool(() => 0);
    const first = Array.from({ length: 256 }, () => pool.take());
    expect(first.slice(252, 256)).toEqual(['127.1.1.253', '127.1.1.254', '127.1.2.1', '127.1.2.2']);
    expect(new Set(first).size).toBe(256);
    expect(first.every((ip) => !ip.startsWith('127.0.'))).toBe(true);
  });

  it('hands out addresses round robin, wraps at the end and never gives one in use', () => {
    const pool = new PodIpPool(() => 0.99999999);
    expect(pool.take()).toBe('127.254.254.254');
    expect(pool.take()).toBe('127.1.1.1');
    pool.release('127.254.254.254');
    expect(pool.take()).toBe('127.1.1.2');
    pool.release('127.1.1.1');
    pool.release('127.254.254.254');
    // Round robin: the released 127.1.1.1 is not handed out again before the pool came round.
    expect(pool.take()).toBe('127.1.1.3');
  });
});
