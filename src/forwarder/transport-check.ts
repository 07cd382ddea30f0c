/**
 * Whether the binding ingress can be spoken to as configured. TLS against a plain ingress
 * (ERR_796), a refused certificate (ERR_795), or a plain client closed without a reply by a server
 * that speaks TLS: every dial then fails the same way until someone changes the configuration, so
 * `/readyz` turns false with the reason. Any answer of the ingress (a stream, or an ERR_7xx it
 * sent) clears it; while it lasts, a check dials again with backoff (the pod gets no traffic
 * while unready, so the check is what notices a fix on the ingress's side).
 */
import { Backoff } from '../time/backoff.js';
import { TRANSPORT_CHECK_CURVE } from '../time/curves.js';

/** `undefined`: nothing learned (the ingress was not reached for another reason). */
export type TransportVerdict = { ok: true } | { ok: false; problem: string } | undefined;

export class TransportCheck {
  private current: string | undefined;
  private readonly backoff = new Backoff(TRANSPORT_CHECK_CURVE);
  private timer: NodeJS.Timeout | undefined;
  private probing = false;
  private stopped = false;

  constructor(
    /** Dials the ingress once and says what it learned. */
    private readonly check: () => Promise<TransportVerdict>,
    private readonly onChange: () => void,
  ) {}

  /** Why the ingress cannot be spoken to as configured, for `/readyz`; undefined when it can (or unknown). */
  get problem(): string | undefined {
    return this.current;
  }

  observe(verdict: TransportVerdict): void {
    if (!verdict || this.stopped) return;
    if (verdict.ok) {
      if (this.current === undefined) return;
      this.current = undefined;
      this.backoff.reset();
      clearTimeout(this.timer);
      this.timer = undefined;
      this.onChange();
      return;
    }
    const changed = this.current !== verdict.problem;
    this.current = verdict.problem;
    if (changed) this.onChange();
    this.schedule();
  }

  /** A dial failed in a way that may be a mismatch: find out now (one check at a time). */
  suspect(): void {
    if (this.probing || this.stopped || this.current !== undefined) return;
    this.runCheck();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private runCheck(): void {
    this.probing = true;
    void this.check().then(
      (v) => {
        this.probing = false;
        this.observe(v);
      },
      () => {
        this.probing = false;
      },
    );
  }

  private schedule(): void {
    if (this.timer || this.stopped) return;
    const delay = this.backoff.next(Date.now(), Math.random());
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.runCheck();
      // Keep checking while the problem lasts; observe() re-arms after each answer.
    }, delay);
    this.timer.unref();
  }
}
