import { errors, type ApiError } from './status.js';
import type { Verb } from './types.js';
import type { WatchHub } from './watch.js';

/**
 * Fault injection, driven from tests through the Kubesim handle. Request failures are
 * deterministic: a rule with share 0.5 fails every second matching request (an accumulator,
 * not a coin flip), so a test can count on exactly which calls fail.
 */

export interface FailRequestsRule {
  status: 429 | 500 | 503;
  /** Fraction of matching requests that fail, 0..1 (1 = all). */
  share: number;
  /** Sent as Retry-After (and details.retryAfterSeconds); defaults to 1 for 429. */
  retryAfterSeconds?: number;
  /** Only requests with this verb and/or resource plural; discovery requests have no resource. */
  match?: { verb?: Verb; resource?: string };
}

export interface KubesimFaults {
  /** Destroys every open watch socket abruptly. */
  dropWatches(): void;
  /** On: open and new watches stop receiving anything while the connection stays open. */
  hangWatches(on: boolean): void;
  /** Adds a failure rule (rules accumulate until clear()). */
  failRequests(rule: FailRequestsRule): void;
  /** Delays every request by `ms` before it is handled. */
  latency(ms: number): void;
  /** Removes every rule, latency and the hang flag. */
  clear(): void;
}

interface ActiveRule {
  rule: FailRequestsRule;
  acc: number;
}

export class Faults implements KubesimFaults {
  private rules: ActiveRule[] = [];
  private delayMs = 0;

  constructor(private readonly watches: WatchHub) {}

  dropWatches(): void {
    this.watches.dropAll();
  }

  hangWatches(on: boolean): void {
    this.watches.hang(on);
  }

  failRequests(rule: FailRequestsRule): void {
    if (!(rule.share >= 0 && rule.share <= 1)) throw new RangeError('share must be within 0..1');
    this.rules.push({ rule, acc: 0 });
  }

  latency(ms: number): void {
    this.delayMs = Math.max(0, ms);
  }

  clear(): void {
    this.rules = [];
    this.delayMs = 0;
    this.watches.hang(false);
  }

  async delay(): Promise<void> {
    if (this.delayMs > 0) await new Promise((r) => setTimeout(r, this.delayMs));
  }

  /** The injected failure for this request, if one is due. */
  failureFor(verb: Verb, resource: string | undefined): ApiError | undefined {
    for (const active of this.rules) {
      const m = active.rule.match;
      if (m?.verb && m.verb !== verb) continue;
      if (m?.resource && m.resource !== resource) continue;
      active.acc += active.rule.share;
      if (active.acc < 1 - 1e-9) continue;
      active.acc -= 1;
      const { status, retryAfterSeconds } = active.rule;
      if (status === 429) return errors.tooManyRequests(retryAfterSeconds ?? 1);
      if (status === 503) return errors.serviceUnavailable(retryAfterSeconds);
      return errors.internal('kubesim injected fault');
    }
    return undefined;
  }
}
