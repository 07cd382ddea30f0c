/** Lets timers and I/O (lease renewal, probes, watch events) run before the next chunk. */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
