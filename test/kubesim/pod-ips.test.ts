import { describe, expect, it } from 'vitest';
import { PodIpPool } from '../../src/kubesim/workloads/pod-ips.js';

describe('kubesim pod IP pool', () => {
  it('starts where its random source says, so two kubesims on one host do not hand out the same first address', () => {
    expect(new PodIpPool(() => 0).take()).toBe('127.0.1.1');
    expect(new PodIpPool(() => 0.5).take()).toBe('127.0.128.1');
    const a = new PodIpPool(() => 0.1).take();
    const b = new PodIpPool(() => 0.7).take();
    expect(a).not.toBe(b);
  });

  it('hands out addresses round robin, wraps at the end and never gives one in use', () => {
    const pool = new PodIpPool(() => 0.99999999);
    expect(pool.take()).toBe('127.0.254.254');
    expect(pool.take()).toBe('127.0.1.1');
    pool.release('127.0.254.254');
    expect(pool.take()).toBe('127.0.1.2');
  });
});
