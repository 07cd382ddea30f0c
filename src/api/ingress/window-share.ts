/**
 * v2 download windows (docs/forwarder.md "Windows"): how much a stream the forwarder receives may
 * have in flight. Pure.
 *
 * node:http2 has no per-stream WINDOW_UPDATE of one's own: a stream's window is the session's
 * SETTINGS_INITIAL_WINDOW_SIZE, and changing that setting moves every open stream's window by the
 * difference (RFC 9113 §6.9.2). So a window cannot grow for the one stream whose reader keeps up;
 * it can follow how many streams a session carries. A session offers its streams a shared window
 * divided among them: one bulk download alone on a session gets all of it (throughput ≈ window /
 * RTT, like v1's TCP), many streams get at least `floor` each (what a client that stops reading
 * pins, as before).
 *
 * Shares are whole powers of two (shared / 1, 2, 4, …), so the setting changes only when the count
 * crosses one, at most log2(shared / floor) times on the way up and down.
 */
export interface WindowShare {
  /** Each stream's window at least: `ingress.streamWindowBytes`. */
  floor: number;
  /** What a session's streams share above it: `ingress.sharedWindowBytes` (≤ floor: no sharing). */
  shared: number;
}

/** The stream window a session offers while it carries `streams` streams. */
export function shareOf(streams: number, w: WindowShare): number {
  if (w.shared <= w.floor) return w.floor;
  return Math.max(w.floor, Math.floor(w.shared / nextPowerOfTwo(Math.max(1, streams))));
}

/**
 * The most that `streams` streams whose clients all stopped reading can pin on one session. The
 * j-th oldest live stream has shared the session with at least j streams (the j − 1 older ones are
 * still open), so its window was never above shareOf(j): the sum of those bounds it. With the
 * defaults (512 KiB, 16 MiB): 16 MiB for one stream, 56 MiB for 32, then 512 KiB per stream more.
 */
export function pinnedAtMost(streams: number, w: WindowShare): number {
  let sum = 0;
  for (let j = 1; j <= streams; j++) sum += shareOf(j, w);
  return sum;
}

/**
 * A session's own window (connection flow control): room for the largest share and for sixteen
 * streams at the floor. It bounds what is in flight on the session, not what is pinned: Node hands
 * a session's bytes to their stream as they arrive, and only a stream's window waits for its reader.
 */
export function sessionWindowFor(w: WindowShare): number {
  return Math.min(2 ** 31 - 1, Math.max(w.floor * 16, w.shared * 2));
}

/** What the session's setting should become now: lower at once (before a new stream opens), higher once no change is unacknowledged. */
export function nextSetting(
  current: number,
  streams: number,
  w: WindowShare,
  settingUnacknowledged: boolean,
): number | undefined {
  const target = shareOf(streams, w);
  if (target < current) return target;
  if (target > current && !settingUnacknowledged) return target;
  return undefined;
}

function nextPowerOfTwo(n: number): number {
  let p = 1;
  while (p < n) p *= 2;
  return p;
}
