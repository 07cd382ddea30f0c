/**
 * What a port's dials said of its endpoint's upstream, for the dial gate's DOWN_PORT_DIALS (pure).
 *
 * A port is *down* after DOWN_AFTER answers in a row said the upstream is down (ERR_730 refused,
 * ERR_731 unreachable), and up again at the first dial that reached it. One refusal is not an
 * outage (a pool behind the upstream address may refuse one connection and take the next), and
 * capping a healthy endpoint's dials for it would cost its clients; a black hole answers hundreds
 * of dials in a row. An answer from a dial granted before one that reached the upstream is older
 * news and does not count.
 */

/** Down answers in a row that mark the upstream down. */
export const DOWN_AFTER = 3;

/**
 * Dials awaiting the ingress's answer at once for a port whose upstream is down: an upstream that
 * refuses (ERR_730, answered in a round trip) is still probed hundreds of times a second at
 * loopback RTT, a black-holed one (ERR_731 after the ingress's 5 s) four times per 5 s, and the
 * first probe that gets through lets the port's waiting clients go.
 */
export const DOWN_PORT_DIALS = 4;

export interface UpstreamVerdict {
  readonly down: boolean;
  /** Down answers since the last dial that reached the upstream. */
  readonly streak: number;
  /** Grant sequence number of the latest-granted dial that reached it; older dials' answers are ignored. */
  readonly reachedSeq: number;
}

/** Nothing known yet, or forgotten from grant `seq` on (a port that serves another endpoint now). */
export function unknownVerdict(seq = -1): UpstreamVerdict {
  return { down: false, streak: 0, reachedSeq: seq };
}

/** The verdict after the dial granted as `seq` was answered: it `reached` the upstream, or it said the upstream is down. */
export function afterAnswer(v: UpstreamVerdict, seq: number, reached: boolean): UpstreamVerdict {
  if (reached) return { down: false, streak: 0, reachedSeq: Math.max(v.reachedSeq, seq) };
  if (seq < v.reachedSeq) return v;
  const streak = v.streak + 1;
  return { down: v.down || streak >= DOWN_AFTER, streak, reachedSeq: v.reachedSeq };
}
