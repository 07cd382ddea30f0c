import { describe, expect, it } from 'vitest';
import { nextReservations } from '../../src/binding/port-reservations.js';
import { allocatePorts } from '../../src/binding/ports.js';
import { seeded } from './helpers.js';

const GRACE = 600_000;

describe('port reservations (pure)', () => {
  it('a URL dropped from the allocation is reserved for the grace, then released', () => {
    const before = new Map([
      ['http://a.prod:80', 10001],
      ['http://b.prod:80', 10002],
    ]);
    const now = new Map([['http://a.prod:80', 10001]]);
    const r1 = nextReservations(new Map(), before, now, 1_000, GRACE);
    expect([...r1]).toEqual([['http://b.prod:80', { port: 10002, until: 1_000 + GRACE }]]);
    // Still gone a pass later: kept, with its first deadline.
    const r2 = nextReservations(r1, now, now, 5_000, GRACE);
    expect(r2.get('http://b.prod:80')).toEqual({ port: 10002, until: 1_000 + GRACE });
    // Back: no longer reserved (it holds the port again).
    const back = new Map([...now, ['http://b.prod:80', 10002]]);
    expect(nextReservations(r2, now, back, 6_000, GRACE).size).toBe(0);
    // Expired.
    expect(nextReservations(r2, now, now, 1_000 + GRACE, GRACE).size).toBe(0);
    // Off.
    expect(nextReservations(new Map(), before, now, 1_000, 0).size).toBe(0);
  });

  it('a returning URL gets its reserved port; new URLs avoid reserved ports while others are free', () => {
    const range = { min: 10000, max: 10003 };
    const reserved = new Map([['http://b.prod:80', 10002]]);
    const back = allocatePorts({
      urls: ['http://b.prod:80'],
      claims: [],
      reserved,
      range,
      random: () => 0.5,
    });
    expect(back.ports.get('http://b.prod:80')).toBe(10002);
    // Three new URLs in a range of four with one reserved: none gets 10002.
    const fresh = allocatePorts({
      urls: ['http://x.prod:80', 'http://y.prod:80', 'http://z.prod:80'],
      claims: [],
      reserved,
      range,
      random: seeded(3),
    });
    expect([...fresh.ports.values()].sort()).toEqual([10000, 10001, 10003]);
    // A full range uses the reserved port rather than leaving a URL without one.
    const full = allocatePorts({
      urls: ['http://w.prod:80', 'http://x.prod:80', 'http://y.prod:80', 'http://z.prod:80'],
      claims: [],
      reserved,
      range,
      random: seeded(3),
    });
    expect(full.exhausted).toEqual([]);
  });
});
