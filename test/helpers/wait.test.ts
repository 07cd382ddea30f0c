import { describe, expect, it } from 'vitest';
import { budget, timeFactor, timeFactorFrom } from './budget.js';
import { conditionOf, describeSeen, pollUntil, WaitTimeout } from './wait.js';

describe('budget: one factor for every child-process wait', () => {
  it('takes TEST_TIME_FACTOR when set', () => {
    expect(timeFactorFrom({ TEST_TIME_FACTOR: '5' }, [0.1, 0.1], 2)).toBe(5);
    expect(timeFactorFrom({ TEST_TIME_FACTOR: '0.5' }, [40, 40], 2)).toBe(0.5);
  });

  it('refuses a factor that is not a positive number, naming the setting', () => {
    expect(() => timeFactorFrom({ TEST_TIME_FACTOR: 'fast' }, [0, 0], 2)).toThrow(/TEST_TIME_FACTOR=fast/);
    expect(() => timeFactorFrom({ TEST_TIME_FACTOR: '0' }, [0, 0], 2)).toThrow(/positive/);
  });

  it('derives it from the load average per core otherwise: 1 when quiet, 5 at load 10 on 2 cores, at most 8', () => {
    expect(timeFactorFrom({}, [0.4, 0.2], 2)).toBe(1);
    expect(timeFactorFrom({}, [10, 6], 2)).toBe(5);
    expect(timeFactorFrom({}, [3, 10], 2)).toBe(5); // the larger of the 1- and 5-minute figures
    expect(timeFactorFrom({}, [100, 100], 2)).toBe(8);
    expect(timeFactorFrom({ TEST_TIME_FACTOR: ' ' }, [4, 4], 2)).toBe(2);
  });

  it('scales a budget by the run factor', () => {
    expect(budget(1000)).toBe(Math.ceil(1000 * timeFactor()));
    expect(timeFactor()).toBeGreaterThan(0);
  });
});

describe('pollUntil: a wait that says what it last saw', () => {
  it('returns the first accepted value', async () => {
    let n = 0;
    await expect(
      pollUntil(
        'n to reach 3',
        () => ++n,
        (v) => v >= 3,
        { intervalMs: 1 },
      ),
    ).resolves.toBe(3);
  });

  it('on timeout names what it waited for, the last value the probe returned and the last error', async () => {
    let n = 0;
    const probe = (): { replicas: number } => {
      n++;
      if (n % 2 === 0) throw new Error(`read ${n} refused`);
      return { replicas: n };
    };
    const err = await pollUntil('three replicas', probe, (v) => v.replicas === -1, {
      timeoutMs: 60,
      intervalMs: 5,
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WaitTimeout);
    const timeout = err as WaitTimeout;
    expect(timeout.message).toMatch(
      /^timed out after \d+ ms waiting for three replicas; last saw \{"replicas":\d+\}/,
    );
    expect(timeout.message).toMatch(/; last error: read \d+ refused$/);
    expect(timeout.lastSeen).toEqual({ value: { replicas: expect.any(Number) } });
    expect(timeout.budgetMs).toBe(budget(60));
  });

  it('says so when every probe threw', async () => {
    const err = await pollUntil(
      'a port',
      () => {
        throw new Error('ECONNREFUSED');
      },
      () => true,
      { timeoutMs: 20, intervalMs: 5 },
    ).catch((e: unknown) => e);
    expect((err as Error).message).toMatch(
      /last saw nothing \(every probe threw\); last error: ECONNREFUSED$/,
    );
  });

  it("with onError 'throw' fails at the first throw", async () => {
    let calls = 0;
    const err = await pollUntil(
      'x',
      () => {
        calls++;
        throw new Error('broken probe');
      },
      () => true,
      { timeoutMs: 10_000, onError: 'throw' },
    ).catch((e: unknown) => e);
    expect((err as Error).message).toBe('broken probe');
    expect(calls).toBe(1);
  });

  it('describes a value as one bounded line', () => {
    expect(describeSeen(undefined)).toBe('undefined');
    expect(describeSeen('ready')).toBe('"ready"');
    expect(describeSeen(new Error('boom'))).toBe('Error: boom');
    expect(describeSeen(10n)).toBe('10n');
    const long = describeSeen('x'.repeat(2000));
    expect(long.length).toBeLessThan(700);
    expect(long).toMatch(/… \(2002 chars\)$/);
  });
});

describe('conditionOf: a nameless wait is named by its predicate', () => {
  it("quotes the predicate's source on one line", async () => {
    const seen: number[] = [];
    const check = (): boolean => seen.length === 3;
    expect(conditionOf(check)).toMatch(/^`.*seen\.length === 3.*`$/);
    const err = await pollUntil(conditionOf(check), check, (v) => v, { timeoutMs: 10, intervalMs: 5 }).catch(
      (e: unknown) => e,
    );
    expect((err as Error).message).toMatch(/waiting for `.*seen\.length === 3.*`; last saw false$/);
  });
});
