/**
 * Binding ingress protocol v2 (docs/ingress.md "v2"): forwarded connections as HTTP/2 CONNECT
 * streams. The names both sides share.
 */
export const V2_HEADERS = {
  /** The full endpoint URL, e.g. `http://name.namespace:80`. */
  url: 'x-binding-url',
  /** On an error response: the ERR_7xx code (the body is the v1 refusal JSON). */
  error: 'x-binding-error',
  /** The source pod's IP address (informational). */
  sourceIp: 'x-binding-source-ip',
} as const;

/** ALPN: `h2` selects v2; a TLS session without it is spoken to in v1. */
export const ALPN_H2 = 'h2';

/** The first bytes of an HTTP/2 connection (RFC 9113 §3.4): how a plain ingress tells h2c from a v1 preface. */
export const H2_PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

/**
 * Flow-control window per stream, bytes, by default, at least (both sides): what a reader that
 * stops reading can leave buffered in the receiver for its stream once its session carries many
 * streams. 4 MiB per stream let every client that never reads pin 4 MiB of the forwarder, and a
 * port's share of them 2 GiB. The forwarder gives a session's first streams more
 * (DEFAULT_SHARED_WINDOW, window-share.ts), so a lone download is not held to 512 KiB per round trip.
 */
export const DEFAULT_STREAM_WINDOW = 512 * 1024;

/**
 * The forwarder's download window a session's streams share above DEFAULT_STREAM_WINDOW, by
 * default (window-share.ts): one stream alone on a session has 16 MiB in flight, 32 or more have
 * 512 KiB each; streams that all stopped reading pin at most 56 MiB for the first 32 of a session
 * and 512 KiB for each further one. 16 MiB, not 8: a download at 50 ms moved ~70 MiB/s with 8 MiB
 * and ~120 with 16, where v1 moved 107–139 (BENCHMARKS.md "#27 round 4").
 */
export const DEFAULT_SHARED_WINDOW = 16 * 1024 * 1024;

/**
 * The mock ingress's session (connection) window for its stream window (the forwarder's follows
 * its shared window: window-share.ts sessionWindowFor): room for 16 streams at full speed. It bounds
 * what is in flight on the session, not what a slow reader pins: Node hands a session's bytes to
 * their stream as they arrive (the connection window reopens at once), and only the stream's
 * window waits for the reader.
 */
export function sessionWindow(streamWindow: number): number {
  return Math.min(2 ** 31 - 1, streamWindow * 16);
}

/**
 * node:http2's `maxSessionMemory` (MB) for a session with this session (connection) window: the
 * mock's `sessionWindow(stream window)`, the forwarder's `sessionWindowFor(share)`. Node counts a
 * session's queued outgoing writes and unread incoming data against it and, past it, resets
 * streams with ENHANCE_YOUR_CALM (the default, 10 MB, reset streams of 16 echoes of 4 MiB at
 * once on two sessions: test/ingress/v2.test.ts "both ways at once"). What a session holds is
 * bounded by flow control (its session window in) and each stream's backpressure (out), so the
 * cap is sized to those with room to spare, not used as a bound: four session windows, at least
 * 64 MB.
 */
export function sessionMemoryMb(sessionWindowBytes: number): number {
  return Math.max(64, Math.ceil((4 * sessionWindowBytes) / (1024 * 1024)));
}
