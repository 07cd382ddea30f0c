import { describe, expect, it } from 'vitest';
import { ReportedOnce } from '../../src/controller/decide/reported-once.js';

describe('ReportedOnce', () => {
  it('reports a key once while it stays, and again after it went and came back', () => {
    const lines: string[] = [];
    const once = new ReportedOnce<number>((key, n) => lines.push(`${key}=${n}`));
    once.seen([['a', 1]]);
    once.seen([
      ['a', 2],
      ['b', 3],
    ]);
    once.seen([['b', 4]]);
    once.seen([
      ['a', 5],
      ['b', 6],
    ]);
    expect(lines).toEqual(['a=1', 'b=3', 'a=5']);
  });
});
