import { compileSelector, type EndpointSelector } from '../binding/selector.js';

/**
 * The endpoint selector setting, compiled once: the settings reader compiles it (its error is one
 * of the listed problems) and carries the result to `startController`, which compiles only when
 * started without it (tests, the demo, the benchmark). Both say the same one line.
 */

/** Thrown when the selector does not compile: startup stops with exit code 2. */
export class SelectorError extends Error {
  override name = 'SelectorError';
}

/** The compiled selector, or the one line the user sees (`bindings.endpointSelector: …`). */
export function compileSelectorSetting(
  expression: string,
): { ok: true; selector: EndpointSelector } | { ok: false; message: string } {
  const r = compileSelector(expression);
  return r.ok
    ? { ok: true, selector: r.selector }
    : { ok: false, message: `bindings.endpointSelector: ${r.message}` };
}

export function compileOrThrow(expression: string): EndpointSelector {
  const r = compileSelectorSetting(expression);
  if (!r.ok) throw new SelectorError(r.message);
  return r.selector;
}
