/**
 * The agent authtoken and what the ingress thinks of it. The token comes from a mounted Secret
 * file (re-read when the kubelet swaps it, so a rotated Secret is used without a restart) or,
 * without a file, from the environment. When the ingress refuses it (ERR_710) every connection
 * would fail, so `/readyz` turns false with the reason until the ingress accepts it again: the
 * token changed, or a periodic check is answered with anything but ERR_710.
 */
import { Backoff } from '../time/backoff.js';
import { TOKEN_CHECK_CURVE } from '../time/curves.js';

export const MAX_AUTHTOKEN_LENGTH = 512;

/** One trailing newline (an editor's, `kubectl create secret --from-file`) is not part of the token. */
export function parseAuthtoken(raw: string): { ok: true; token: string } | { ok: false; message: string } {
  const token = raw.replace(/\r?\n$/, '');
  if (token.length === 0) return { ok: false, message: 'is empty' };
  if (token.length > MAX_AUTHTOKEN_LENGTH || /\s/.test(token)) {
    return { ok: false, message: `must be 1–${MAX_AUTHTOKEN_LENGTH} characters without whitespace` };
  }
  return { ok: true, token };
}

export type TokenVerdict = 'accepted' | 'refused';

export class AuthtokenState {
  private current: string;
  private refusal: string | undefined;
  private readonly backoff = new Backoff(TOKEN_CHECK_CURVE);
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    initial: string,
    /** Asks the ingress about `token`: resolves with its verdict, or undefined when it could not be asked. */
    private readonly check: (token: string) => Promise<TokenVerdict | undefined>,
    private readonly onChange: () => void,
  ) {
    this.current = initial;
  }

  get token(): string {
    return this.current;
  }

  /** Why the token is not usable, for `/readyz`; undefined when it is. */
  get problem(): string | undefined {
    return this.refusal;
  }

  /** A new token (the Secret changed): assumed good until the ingress says otherwise. */
  replace(token: string): void {
    if (token === this.current) return;
    this.current = token;
    this.backoff.reset();
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.refusal !== undefined) {
      this.refusal = undefined;
      this.onChange();
    }
  }

  /** What a dial with `token` learned: ERR_710 (refused) or any other answer of the ingress (accepted). */
  observe(token: string, verdict: TokenVerdict, detail = ''): void {
    if (token !== this.current || this.stopped) return; // an answer about a token no longer in use
    if (verdict === 'accepted') {
      if (this.refusal === undefined) return;
      this.refusal = undefined;
      this.backoff.reset();
      clearTimeout(this.timer);
      this.timer = undefined;
      this.onChange();
      return;
    }
    const first = this.refusal === undefined;
    this.refusal =
      `the binding ingress refuses the authtoken (ERR_710${detail ? `: ${detail}` : ''}); ` +
      'put a valid agent authtoken in the Secret (its AUTHTOKEN key), it is re-read without a restart';
    if (first) this.onChange();
    this.scheduleCheck();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private scheduleCheck(): void {
    if (this.timer || this.stopped) return;
    const delay = this.backoff.next(Date.now(), Math.random());
    this.timer = setTimeout(() => {
      this.timer = undefined;
      const token = this.current;
      void this.check(token).then((verdict) => {
        if (verdict) this.observe(token, verdict);
        if (this.refusal !== undefined) this.scheduleCheck();
      });
    }, delay);
    this.timer.unref();
  }
}
