import { describe, expect, it } from 'vitest';
import { DEFAULT_SHARED_WINDOW, DEFAULT_STREAM_WINDOW } from '../../src/api/ingress/v2-protocol.js';
import {
  nextSetting,
  pinnedAtMost,
  sessionWindowFor,
  shareOf,
  type WindowShare,
} from '../../src/api/ingress/window-share.js';

const KiB = 1024;
const MiB = 1024 * KiB;
/** The shares of docs/forwarder.md's table (the defaults' floor, an 8 MiB shared window). */
const defaults: WindowShare = { floor: 512 * KiB, shared: 8 * MiB };

/** The forwarder's v2 download window follows the streams a session carries (#27 stream throughput). */
describe('window share', () => {
  it.each([
    [0, 8 * MiB],
    [1, 8 * MiB],
    [2, 4 * MiB],
    [3, 2 * MiB],
    [4, 2 * MiB],
    [5, 1 * MiB],
    [8, 1 * MiB],
    [9, 512 * KiB],
    [16, 512 * KiB],
    [17, 512 * KiB],
    [5_000, 512 * KiB],
  ])('a session with %i streams offers each %i bytes', (streams, window) => {
    expect(shareOf(streams, defaults)).toBe(window);
  });

  it('never goes below the floor, and shares nothing when shared ≤ floor', () => {
    expect(shareOf(1, { floor: 512 * KiB, shared: 0 })).toBe(512 * KiB);
    expect(shareOf(1, { floor: 512 * KiB, shared: 512 * KiB })).toBe(512 * KiB);
    expect(shareOf(3, { floor: 3 * MiB, shared: 8 * MiB })).toBe(3 * MiB);
  });

  it('bounds what streams that all stopped reading pin: 24 MiB for 16 at 8 MiB shared, then the floor each', () => {
    expect(pinnedAtMost(1, defaults)).toBe(8 * MiB);
    expect(pinnedAtMost(16, defaults)).toBe(24 * MiB);
    expect(pinnedAtMost(100, defaults)).toBe(24 * MiB + 84 * 512 * KiB);
    // The forwarder's defaults (16 MiB shared): 56 MiB for 32, 40 MiB above their floors (the
    // chart's memory limit counts that per session).
    const forwarder = { floor: DEFAULT_STREAM_WINDOW, shared: DEFAULT_SHARED_WINDOW };
    expect(pinnedAtMost(32, forwarder)).toBe(56 * MiB);
    expect(pinnedAtMost(32, forwarder) - 32 * DEFAULT_STREAM_WINDOW).toBe(40 * MiB);
    // Without sharing: the floor per stream, as before.
    expect(pinnedAtMost(100, { floor: 512 * KiB, shared: 0 })).toBe(100 * 512 * KiB);
  });

  it('the bound holds for any order of opens and closes (the j-th oldest live stream never had more than shareOf(j))', () => {
    // Random walks of opens and closes; each live stream's largest window so far is what it can pin.
    let seed = 7;
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    for (let run = 0; run < 200; run++) {
      const live: { most: number }[] = [];
      for (let step = 0; step < 200; step++) {
        if (live.length > 0 && random() < 0.45) live.splice(Math.floor(random() * live.length), 1);
        else live.push({ most: 0 });
        const window = shareOf(live.length, defaults);
        for (const s of live) s.most = Math.max(s.most, window);
        const pinned = live.reduce((n, s) => n + s.most, 0);
        expect(pinned, `run ${run} step ${step}: ${live.length} streams pin ${pinned}`).toBeLessThanOrEqual(
          pinnedAtMost(live.length, defaults),
        );
      }
    }
  });

  it('lowers at once, raises only once the last change is acknowledged', () => {
    expect(nextSetting(8 * MiB, 2, defaults, true)).toBe(4 * MiB);
    expect(nextSetting(4 * MiB, 1, defaults, true)).toBeUndefined();
    expect(nextSetting(4 * MiB, 1, defaults, false)).toBe(8 * MiB);
    expect(nextSetting(4 * MiB, 2, defaults, false)).toBeUndefined();
  });

  it("the session's own window has room for the largest share and sixteen floors", () => {
    expect(sessionWindowFor(defaults)).toBe(16 * MiB);
    expect(sessionWindowFor({ floor: 2 * MiB, shared: 0 })).toBe(32 * MiB);
    expect(sessionWindowFor({ floor: 2 ** 30, shared: 0 })).toBe(2 ** 31 - 1);
  });
});
