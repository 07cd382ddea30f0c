import { inspect } from 'node:util';
import { budget } from './budget.js';

/**
 * The one polling wait of the tests: `probe` is called until `accept` holds for what it returned.
 * On timeout the failure names what was awaited, the budget, the last value the probe returned
 * and the last error it threw, so a red test says what it saw instead of only "not in time".
 * `timeoutMs` is the budget on a quiet machine; it is scaled by the run's factor (./budget.ts).
 */
export interface PollOptions {
  /** The quiet-machine budget in ms, scaled by `budget()`. */
  timeoutMs?: number;
  intervalMs?: number;
  /** 'retry' (the default) keeps polling after a throw and reports it; 'throw' fails at once. */
  onError?: 'retry' | 'throw';
}

/** Thrown when a wait runs out; `lastSeen` and `lastError` are what the probe last gave. */
export class WaitTimeout extends Error {
  constructor(
    readonly what: string,
    readonly budgetMs: number,
    readonly lastSeen: { value: unknown } | undefined,
    readonly lastError: unknown,
  ) {
    super(
      `timed out after ${budgetMs} ms waiting for ${what}; last saw ${lastSeen ? describeSeen(lastSeen.value) : 'nothing (every probe threw)'}` +
        (lastError === undefined ? '' : `; last error: ${describeError(lastError)}`),
    );
    this.name = 'WaitTimeout';
  }
}

const SEEN_LIMIT = 600;

/** A value as one bounded line: JSON where it can be, the string form otherwise. */
export function describeSeen(value: unknown): string {
  let text: string;
  if (value === undefined) text = 'undefined';
  else if (typeof value === 'string') text = JSON.stringify(value);
  else if (value instanceof Error) text = `${value.name}: ${value.message}`;
  else {
    try {
      text = JSON.stringify(value) ?? inspect(value);
    } catch {
      text = inspect(value, { breakLength: Infinity }); // a BigInt or a cycle
    }
  }
  return text.length > SEEN_LIMIT ? `${text.slice(0, SEEN_LIMIT)}… (${text.length} chars)` : text;
}

function describeError(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** What a wait without a name waited for: its predicate's source, on one line and bounded. */
export function conditionOf(check: (...args: never[]) => unknown): string {
  const source = check.toString().replace(/\s+/g, ' ');
  return `\`${source.length > 200 ? `${source.slice(0, 200)}…` : source}\``;
}

/** Polls `probe` until `accept(value)`; returns that value or throws a WaitTimeout. */
export async function pollUntil<T>(
  what: string,
  probe: () => T | Promise<T>,
  accept: (value: T) => boolean,
  { timeoutMs = 10_000, intervalMs = 25, onError = 'retry' }: PollOptions = {},
): Promise<T> {
  const budgetMs = budget(timeoutMs);
  const deadline = Date.now() + budgetMs;
  let lastSeen: { value: T } | undefined;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (accept(value)) return value;
      lastSeen = { value };
    } catch (err) {
      if (onError === 'throw') throw err;
      lastError = err;
    }
    if (Date.now() > deadline) throw new WaitTimeout(what, budgetMs, lastSeen, lastError);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
