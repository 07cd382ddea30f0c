/**
 * How many ingress handshakes the forwarder runs at once (the dial gate's turns). Pure
 * bookkeeping, no timers; the gate tells it of grants, completed handshakes and push-backs.
 *
 * A fixed number of turns caps the dial rate at turns / handshake time (64 turns over TLS at
 * 200 ms RTT: 160 dials/s), and a fixed number above the ingress's per-source handshake budget
 * gets dials refused. That budget is counted by the ingress in its own terms (a TLS dial is
 * pending there for its last round trip only, a plain one hardly at all), so it cannot be
 * configured here in turns; it is learnt, like TCP's congestion window:
 *
 * - slow start: the window starts at INITIAL_WINDOW (or the configured maximum when smaller) and
 *   grows by one turn per handshake completed while clients wait (doubling per round trip), up to
 *   `limits.maxConcurrentDials`;
 * - push-back (the ingress has too many handshakes from us: ERR_742, ERR_743, a close during the
 *   TLS handshake): the handshakes that were running when the refused dial was granted are the
 *   learnt *ceiling* (the ingress was already full then), and the window halves (the first
 *   time, ending slow start) or loses an eighth (later; to no more than twice the dials in
 *   flight at that grant), down to one turn. Push-backs of dials
 *   granted before that cut belong to the same overshoot and are not cut again;
 * - after a push-back the window regrows one turn per handshake up to 7/8 of the ceiling, then
 *   by an eighth of a turn per handshake: it sits near the budget and finds a larger one within
 *   a few handshake times, at the cost of a push-back every few handshake times;
 * - grants are paced (`spacingMs`, `paceAfterGrant`): a window of turns granted at once ends at
 *   once and is granted again at once, so a burst's handshakes move in waves. The ingress counts
 *   a TLS dial as pending for its last round trip only, half of the forwarder's turn: in waves, it
 *   sees the whole window pending for that half and none for the other, and pushes back at a
 *   window of its budget. Spread over the handshake time, the same budget takes twice the window
 *   (BENCHMARKS.md "#27 round 5").
 */
export const INITIAL_WINDOW = 64;

/** Below this share of the learnt ceiling the window regrows at the slow-start rate. */
const REGROW_SHARE = 7 / 8;

/**
 * Above it, turns added per handshake completed: an eighth of the window per window of
 * handshakes. One turn per window (TCP's rate) kept the window under what the ingress took in
 * the 19:56 UTC runs (see BENCHMARKS "#27 round 3: bursts"): the ceiling learnt from one refused
 * dial is an underestimate when the ingress's own load varies, and a refusal costs a retry at
 * the front of the queue, not a client.
 */
const PROBE = 1 / 8;

/**
 * Grants per handshake time, as a multiple of the window: twice in slow start, where the window
 * doubles per handshake time (TCP paces its slow start at 2 the same way), once after it, so the
 * grants stay evenly spread rather than bunch up whenever turns free up together. In a
 * simulation of the bench's burst (test/forwarder/dial-gate.test.ts's model, handshakes up to
 * 30 % slower than their round trips), 1 served all 2,000 by 9.0 s, 1.25 by 9.3 s and 1.5 left
 * 5–10 to time out.
 */
const PACING_GAIN = { slowStart: 2, steady: 1 } as const;

/**
 * The window kept on a later push-back. The probe adds an eighth of the window per handshake
 * time, and a push-back is seen about one handshake time after its grant: an eighth is what the
 * window overshot by. With grants paced the ingress's count follows the window closely, so a
 * deeper cut only leaves its budget unused: ¾ (the old cut) let 48–70 of 2,000 time out in the
 * simulation above, ⅞ none, at 272–288 push-backs against 147–157 (a retry each, at the front).
 */
const LATER_CUT = 7 / 8;

/**
 * Grants that may go out at once after a quiet spell, as a share of the window: enough that a
 * timer's late run (a busy loop) is made up for, not a wave.
 */
const PACING_BURST_SHARE = 1 / 16;

/**
 * When the next grant may go out, after one went out at `now` (all in ms): one spacing after the
 * previous pace, but never further back than `burst` spacings behind now, so a quiet spell
 * banks at most that many grants.
 */
export function paceAfterGrant(paceAt: number, now: number, spacingMs: number, burst: number): number {
  return Math.max(paceAt, now - burst * spacingMs) + spacingMs;
}

export class DialWindow {
  private size: number;
  private slowStart = true;
  private ceiling = 0;
  /** Turns granted so far: a grant's sequence number. */
  private grants = 0;
  /** Grants numbered below this were made before the last cut (the same overshoot). */
  private noCutBefore = 0;

  constructor(private readonly max: number) {
    this.size = Math.min(INITIAL_WINDOW, max);
  }

  /** Handshakes allowed at once now. */
  get turns(): number {
    return Math.max(1, Math.floor(this.size));
  }

  /** The handshakes in flight at the last push-back (0: none yet). */
  get learnt(): number {
    return this.ceiling;
  }

  /**
   * Time between grants, ms, for handshakes of `handshakeMs` (0 while none has completed yet:
   * no pacing before the first round trip is known).
   */
  spacingMs(handshakeMs: number): number {
    const gain = this.slowStart ? PACING_GAIN.slowStart : PACING_GAIN.steady;
    return handshakeMs / (this.turns * gain);
  }

  /** Grants that may go out back to back after a quiet spell. */
  get pacingBurst(): number {
    return Math.max(1, Math.floor(this.turns * PACING_BURST_SHARE));
  }

  /** Turns granted so far (the next grant's sequence number). */
  get issued(): number {
    return this.grants;
  }

  /** A turn was granted; returns its sequence number (for `pushedBack`). */
  grant(): number {
    return this.grants++;
  }

  /** A handshake completed; the window grows only while clients wait for a turn. */
  completed(clientsWaiting: boolean): void {
    if (!clientsWaiting || this.size >= this.max) return;
    const fast = this.slowStart || this.size < REGROW_SHARE * this.ceiling;
    this.size = Math.min(this.max, this.size + (fast ? 1 : PROBE));
  }

  /**
   * The ingress refused the dial granted as `seq` for having too many handshakes from us;
   * `inFlightAtGrant` handshakes were running when it was granted.
   */
  pushedBack(seq: number, inFlightAtGrant: number): void {
    if (seq < this.noCutBefore) return;
    // Slow start doubles per round trip, so its first overshoot may be twice the budget; after
    // that the window is near it, and a refused dial costs little (it retries at the front).
    // A later cut goes no higher than twice the dials in flight when the refused one was granted
    // (the ingress counts about half of a turn): a budget far below the window (4 turns, say) is
    // reached in a cut or two, not in a dozen of an eighth.
    this.size = this.slowStart
      ? Math.max(1, this.size / 2)
      : Math.max(1, Math.min(this.size * LATER_CUT, 2 * inFlightAtGrant));
    this.slowStart = false;
    this.ceiling = Math.max(1, inFlightAtGrant);
    this.noCutBefore = this.grants;
  }
}
