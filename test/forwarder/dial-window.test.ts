import { describe, expect, it } from 'vitest';
import { DialWindow, INITIAL_WINDOW, paceAfterGrant } from '../../src/forwarder/dial-window.js';

/** Grants `n` turns; returns their sequence numbers. */
function grantN(w: DialWindow, n: number): number[] {
  return Array.from({ length: n }, () => w.grant());
}

describe('DialWindow (the handshake window, learnt from push-backs)', () => {
  it('doubles per window of handshakes while clients wait, and not while none do', () => {
    const w = new DialWindow(1000);
    for (let i = 0; i < INITIAL_WINDOW; i++) w.completed(false);
    expect(w.turns).toBe(INITIAL_WINDOW);
    for (let i = 0; i < INITIAL_WINDOW; i++) w.completed(true);
    expect(w.turns).toBe(2 * INITIAL_WINDOW);
    expect(new DialWindow(10).turns).toBe(10);
  });

  it('goes down to what the ingress takes, below the 64 it starts with (a budget of 4 turns)', () => {
    const w = new DialWindow(1000);
    // Each round: the window's worth of dials granted, the ingress refuses all beyond the 4th.
    for (let round = 0; round < 12; round++) {
      const seqs = grantN(w, w.turns);
      seqs.forEach((seq, i) => {
        if (i >= 4) w.pushedBack(seq, i);
      });
    }
    expect({ turns: w.turns, learnt: w.learnt }).toEqual({ turns: 4, learnt: 4 });
  });

  it('regrows fast to 7/8 of the learnt ceiling, then an eighth of a turn per handshake', () => {
    const w = new DialWindow(1000);
    for (let i = 0; i < INITIAL_WINDOW; i++) w.completed(true); // 128
    const [seq] = grantN(w, 1);
    w.pushedBack(seq!, 120); // the ingress was full at 120 in flight
    expect({ turns: w.turns, learnt: w.learnt }).toEqual({ turns: 64, learnt: 120 });
    for (let i = 0; i < 41; i++) w.completed(true);
    expect(w.turns).toBe(105); // 7/8 of 120
    for (let i = 0; i < 104; i++) w.completed(true);
    expect(w.turns).toBe(118); // an eighth of a turn per handshake: 13 more, not 104 more
  });

  it('cuts once per overshoot: push-backs of dials granted before the cut do not cut again', () => {
    const w = new DialWindow(1000);
    const seqs = grantN(w, INITIAL_WINDOW);
    for (const seq of seqs.slice(10)) w.pushedBack(seq, 10);
    expect(w.turns).toBe(INITIAL_WINDOW / 2); // the first cut, in slow start: a half
    const [later] = grantN(w, 1);
    w.pushedBack(later!, 30);
    expect(w.turns).toBe((INITIAL_WINDOW / 2) * (7 / 8)); // later ones: an eighth
    const [again] = grantN(w, 1);
    w.pushedBack(again!, 5);
    expect(w.turns).toBe(10); // but to no more than twice the dials in flight at the refused grant
  });

  it('never goes below one turn', () => {
    const w = new DialWindow(1000);
    for (let i = 0; i < 40; i++) w.pushedBack(w.grant(), 0);
    expect({ turns: w.turns, learnt: w.learnt }).toEqual({ turns: 1, learnt: 1 });
  });

  it('paces grants at twice the window per handshake time in slow start, once after, and not before one is known', () => {
    const w = new DialWindow(1000);
    expect(w.spacingMs(0)).toBe(0);
    expect(w.spacingMs(400)).toBeCloseTo(400 / (INITIAL_WINDOW * 2), 9);
    w.pushedBack(w.grant(), INITIAL_WINDOW); // ends slow start, halves the window
    expect(w.turns).toBe(INITIAL_WINDOW / 2);
    expect(w.spacingMs(400)).toBeCloseTo(400 / (INITIAL_WINDOW / 2), 9);
    expect(w.pacingBurst).toBe(2); // a sixteenth of 32 turns
    expect(new DialWindow(8).pacingBurst).toBe(1);
  });

  it('lets a burst of grants out after a quiet spell, then one per spacing, and keeps the pace a late timer fell behind', () => {
    const spacing = 10;
    const burst = 4;
    /** Grants made at time `now`, starting from the pace `paceAt`; returns them and the pace after. */
    const grantsAt = (now: number, paceAt: number): [number, number] => {
      let n = 0;
      while (paceAt <= now) {
        paceAt = paceAfterGrant(paceAt, now, spacing, burst);
        n++;
      }
      return [n, paceAt];
    };
    const [quiet, pace] = grantsAt(1000, Number.NEGATIVE_INFINITY);
    expect(quiet).toBe(burst + 1);
    expect(pace).toBe(1010);
    // A timer due at 1010 that runs at 1035 makes up for the 25 ms: three grants, not one.
    const [late, pace2] = grantsAt(1035, pace);
    expect(late).toBe(3);
    expect(pace2).toBe(1040);
    // Never more than the burst banked, however long the spell: a wave is what pacing prevents.
    expect(grantsAt(1_000_000, pace2)[0]).toBe(burst + 1);
  });
});
