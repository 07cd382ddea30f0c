import { describe, expect, it } from 'vitest';
import { Admission } from '../../src/mock/ingress/admission.js';

const limits = { maxPending: 4, maxPendingPerSource: 2, maxEstablished: 2, maxEstablishedPerKey: 2 };
const URL_A = 'acme tcp://a.x:1';

function admitted(a: Admission, source: string): number {
  const r = a.admit(source);
  if (!r.ok) throw new Error(`expected ${source} to be admitted`);
  return r.ticket;
}

describe('ingress admission', () => {
  it('refuses a source over its pending cap and admits it again once one of its slots frees', () => {
    const a = new Admission(limits);
    const t1 = admitted(a, '10.0.0.1');
    admitted(a, '10.0.0.1');
    expect(a.admit('10.0.0.1')).toEqual({ ok: false });
    expect(a.admit('10.0.0.2').ok).toBe(true);
    a.release(t1);
    expect(a.admit('10.0.0.1').ok).toBe(true);
  });

  it('counts only authenticated connections against the established cap', () => {
    const a = new Admission({ ...limits, maxPending: 10, maxPendingPerSource: 10 });
    const silent = Array.from({ length: 8 }, () => admitted(a, 'attacker'));
    expect(silent).toHaveLength(8);
    const s1 = admitted(a, 'forwarder');
    const s2 = admitted(a, 'forwarder');
    const s3 = admitted(a, 'forwarder');
    expect(a.promote(s1, URL_A)).toBe('ok');
    expect(a.promote(s2, URL_A)).toBe('ok');
    expect(a.promote(s3, URL_A)).toBe('full');
    expect(a.establishedCount).toBe(2);
    a.release(s1);
    const s4 = admitted(a, 'forwarder');
    expect(a.promote(s4, URL_A)).toBe('ok');
  });

  it('when full, evicts the oldest pending connection of the source holding the most', () => {
    const a = new Admission(limits);
    const x1 = admitted(a, 'x');
    const y1 = admitted(a, 'y');
    admitted(a, 'x');
    const f1 = admitted(a, 'forwarder');
    // x holds 2, y and forwarder 1 each: x's oldest goes.
    const r = a.admit('y');
    expect(r).toMatchObject({ ok: true, evicted: x1 });
    expect(a.pendingCount).toBe(4);
    // Now x 1, y 2, forwarder 1: y's oldest goes, never the forwarder's.
    expect(a.admit('x')).toMatchObject({ ok: true, evicted: y1 });
    expect(a.promote(x1, URL_A)).toBe('gone');
    expect(a.promote(f1, URL_A)).toBe('ok');
  });

  it('breaks ties by age and keeps release idempotent', () => {
    const a = new Admission(limits);
    const p = admitted(a, 'p');
    const q = admitted(a, 'q');
    admitted(a, 'r');
    admitted(a, 's');
    expect(a.admit('t')).toMatchObject({ ok: true, evicted: p });
    expect(a.admit('u')).toMatchObject({ ok: true, evicted: q });
    a.release(q);
    a.release(q);
    expect(a.pendingCount).toBe(4);
  });

  it('keeps each endpoint URL within its share, so the rest stays free for the others', () => {
    const a = new Admission({ ...limits, maxPending: 10, maxPendingPerSource: 10, maxEstablished: 4 });
    const [a1, a2, a3, b1] = [1, 2, 3, 4].map(() => admitted(a, 'forwarder'));
    expect(a.promote(a1!, URL_A)).toBe('ok');
    expect(a.promote(a2!, URL_A)).toBe('ok');
    // A third for the same URL is over its share (2 of 4) although two slots are free.
    expect(a.promote(a3!, URL_A)).toBe('share');
    expect(a.promote(b1!, 'acme tcp://b.x:1')).toBe('ok');
    a.release(a1!);
    expect(a.promote(admitted(a, 'forwarder'), URL_A)).toBe('ok');
  });

  it('frees an established slot on release', () => {
    const a = new Admission(limits);
    const t = admitted(a, 'f');
    expect(a.promote(t, URL_A)).toBe('ok');
    expect(a.pendingCount).toBe(0);
    a.release(t);
    expect(a.establishedCount).toBe(0);
  });
});
