import { describe, expect, it } from 'vitest';
import {
  afterAnswer,
  DOWN_AFTER,
  unknownVerdict,
  type UpstreamVerdict,
} from '../../src/forwarder/upstream-verdict.js';

/** Folds answers, each `[grant sequence number, reached]`, into a verdict. */
const fold = (answers: [number, boolean][], from: UpstreamVerdict = unknownVerdict()) =>
  answers.reduce((v, [seq, reached]) => afterAnswer(v, seq, reached), from);

describe("upstream verdict (what a port's dials said of its upstream)", () => {
  it(`is down only after ${DOWN_AFTER} down answers in a row, and up at the first dial that reached it`, () => {
    const downs = (n: number, from = 0): [number, boolean][] =>
      Array.from({ length: n }, (_, i) => [from + i, false]);
    expect(fold(downs(DOWN_AFTER - 1)).down, 'one short of the streak').toBe(false);
    expect(fold(downs(DOWN_AFTER)).down).toBe(true);
    // A refusal between successes (a pool that refused one connection) is not an outage.
    expect(
      fold([
        [0, false],
        [1, false],
        [2, true],
        [3, false],
        [4, false],
      ]).down,
    ).toBe(false);
    const down = fold(downs(DOWN_AFTER));
    expect(afterAnswer(down, DOWN_AFTER, true)).toEqual({ down: false, streak: 0, reachedSeq: DOWN_AFTER });
  });

  it('ignores a down answer of a dial granted before one that reached the upstream (older news)', () => {
    const reached = fold([[10, true]]);
    expect(
      fold(
        Array.from({ length: 5 }, (_, i) => [i, false]),
        reached,
      ),
    ).toEqual(reached);
    // A dial granted after it still counts.
    expect(
      fold(
        [
          [11, false],
          [12, false],
          [13, false],
        ],
        reached,
      ).down,
    ).toBe(true);
  });

  it('forgets from a grant on: the answers of dials granted before it do not count', () => {
    const forgotten = unknownVerdict(20);
    expect(
      fold(
        [
          [17, false],
          [18, false],
          [19, false],
        ],
        forgotten,
      ).down,
    ).toBe(false);
    expect(
      fold(
        [
          [20, false],
          [21, false],
          [22, false],
        ],
        forgotten,
      ).down,
    ).toBe(true);
  });
});
