/**
 * One-shot signals a process root hands between its parts: a part built early says "now" (caught
 * up, stopped) through a latch it was given, instead of the root re-assigning a captured `let`.
 */

/** A promise resolved once, from outside. Later calls of `resolve` change nothing. */
export class Latch<T = void> {
  readonly promise: Promise<T>;
  readonly resolve: (value: T) => void;

  constructor() {
    let resolve: (value: T) => void = () => undefined;
    // The executor runs before the constructor returns, so `resolve` is the promise's own.
    this.promise = new Promise<T>((r) => (resolve = r));
    this.resolve = resolve;
  }
}

/**
 * `promise`, or a rejection with `Error('aborted')` when `signal` aborts before it settles
 * (without a signal, `promise` itself).
 */
export function unlessAborted<T>(promise: Promise<T>, signal?: AbortSignal): Promise<T> {
  if (!signal) return promise;
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(new Error('aborted'));
    signal.addEventListener('abort', onAbort, { once: true });
    void promise.then((value) => {
      signal.removeEventListener('abort', onAbort);
      resolve(value);
    });
  });
}

/** `fn` run on the first call only; every call returns the first call's result (a stop asked twice). */
export function once<T>(fn: () => T): () => T {
  const memo: { result?: { value: T } } = {};
  return () => (memo.result ??= { value: fn() }).value;
}
