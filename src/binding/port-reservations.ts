/**
 * Port reservations (docs/projection.md "Forwarder ports"): a URL whose projection was removed
 * keeps its forwarder port for a grace period, so an endpoint that comes back (a mistaken
 * removal, a selector flip) gets its old port and clients' connections to it keep their target.
 * Pure.
 */

export interface Reservation {
  port: number;
  /** Ms since the epoch after which the port is free again. */
  until: number;
}

/**
 * The reservations after a pass: the previous ones not yet expired whose URL is still gone, plus
 * every URL the previous pass allocated that this one did not.
 */
export function nextReservations(
  previous: ReadonlyMap<string, Reservation>,
  before: ReadonlyMap<string, number>,
  now: ReadonlyMap<string, number>,
  at: number,
  graceMs: number,
): Map<string, Reservation> {
  const out = new Map<string, Reservation>();
  if (graceMs <= 0) return out;
  for (const [url, r] of previous) if (r.until > at && !now.has(url)) out.set(url, r);
  for (const [url, port] of before) {
    if (!now.has(url) && !out.has(url)) out.set(url, { port, until: at + graceMs });
  }
  return out;
}

/** URL → reserved port, for the allocator. */
export function reservedPorts(reservations: ReadonlyMap<string, Reservation>): Map<string, number> {
  return new Map([...reservations].map(([url, r]) => [url, r.port]));
}
