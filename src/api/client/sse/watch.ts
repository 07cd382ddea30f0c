import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, request, type Dispatcher } from 'undici';
import { silentLogger, type Logger } from '../../../log/logger.js';
import { applyJitter, baseDelay } from '../../../time/backoff.js';
import { SSE_RECONNECT_CURVE, withBounds, type CurveBounds } from '../../../time/curves.js';
import { ApiError, ApiResponseError } from '../errors.js';
import { isRetryableStatus, parseRetryAfter } from '../retry.js';
import { SERVICE_VERSION } from '../transport.js';
import { SseParser, type SseMessage } from './parser.js';

/** `initialMs`: the first reconnect delay's ceiling; doubles with each consecutive failure up to `maxMs`. */
export type ReconnectPolicy = CurveBounds;

export const DEFAULT_RECONNECT: ReconnectPolicy = {
  initialMs: SSE_RECONNECT_CURVE.initialMs,
  maxMs: SSE_RECONNECT_CURVE.maxMs,
};

/**
 * Delay before reconnect number `attempt` (1-based): exponential with "equal jitter", i.e. a
 * random value in [ceiling/2, ceiling], so consecutive reconnects never collapse to zero.
 */
export function reconnectDelayMs(policy: ReconnectPolicy, attempt: number, random = Math.random): number {
  const curve = withBounds(SSE_RECONNECT_CURVE, policy);
  const ceiling = baseDelay(Math.max(0, attempt - 1), curve);
  return applyJitter(ceiling, curve.jitter, 1 - random());
}

export interface SseWatchOptions {
  signal?: AbortSignal;
  /** Resume after this id (sent as Last-Event-ID on the first connection). */
  lastEventId?: string;
  reconnect?: Partial<ReconnectPolicy>;
  /**
   * A stream that delivers nothing (not even a heartbeat comment) for this long is treated as
   * dropped and reconnected. Default 45 s, three default server heartbeats.
   */
  idleTimeoutMs?: number;
  /** Called for every comment line (server heartbeats). */
  onComment?: (text: string) => void;
  /** Called before each reconnect, with the error that ended the previous connection (if any). */
  onReconnect?: (info: { attempt: number; delayMs: number; error?: unknown }) => void;
}

export interface SseConnection {
  url: string;
  apiKey: string;
  dispatcher?: Dispatcher;
  logger?: Logger;
}

function headerValue(h: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const v = h[name];
  return Array.isArray(v) ? v[0] : v;
}

/**
 * Reads a server-sent-events resource for as long as the caller wants: reconnects after a
 * dropped stream with backoff and jitter, resuming with Last-Event-ID from the last id seen, so
 * the server can replay what was missed. Ends without error when `signal` aborts or the caller
 * stops iterating. Throws an ApiError for statuses that will not get better by retrying
 * (403, 404, other 4xx except 429); 429 and 5xx are retried, honouring Retry-After.
 */
export async function* watchSse(conn: SseConnection, opts: SseWatchOptions = {}): AsyncGenerator<SseMessage> {
  const signal = opts.signal;
  const policy = { ...DEFAULT_RECONNECT, ...opts.reconnect };
  const log = conn.logger ?? silentLogger();
  let lastId = opts.lastEventId;
  let failures = 0;
  // A connection pool of its own unless the caller gave one: destroyed when the watch ends, so
  // no socket of a long-lived stream lingers in a shared pool.
  const own = conn.dispatcher ? undefined : new Agent({ keepAliveTimeout: 1_000 });
  const dispatcher = conn.dispatcher ?? own!;
  try {
    while (!signal?.aborted) {
      let lastError: unknown;
      let retryAfterMs: number | undefined;
      let body: Dispatcher.ResponseData['body'] | undefined;
      try {
        const res = await request(conn.url, {
          method: 'GET',
          dispatcher,
          ...(signal ? { signal } : {}),
          bodyTimeout: opts.idleTimeoutMs ?? 45_000,
          headers: {
            authorization: `Bearer ${conn.apiKey}`,
            'service-version': SERVICE_VERSION,
            accept: 'text/event-stream',
            'cache-control': 'no-cache',
            ...(lastId !== undefined && lastId !== '' ? { 'last-event-id': lastId } : {}),
          },
        });
        body = res.body;
        if (res.statusCode !== 200) {
          const error = ApiError.fromResponse(res.statusCode, res.headers, await res.body.text());
          if (!isRetryableStatus(res.statusCode)) throw error;
          retryAfterMs = parseRetryAfter(headerValue(res.headers, 'retry-after'));
          lastError = error;
        } else {
          const type = headerValue(res.headers, 'content-type') ?? '';
          if (!type.toLowerCase().startsWith('text/event-stream')) {
            await res.body.text().catch(() => undefined);
            throw new ApiResponseError(
              `GET ${conn.url}: expected text/event-stream, got "${type}"`,
              res.statusCode,
              headerValue(res.headers, 'operation-id'),
            );
          }
          const parser = new SseParser(opts.onComment ? { onComment: opts.onComment } : {});
          for await (const chunk of res.body as AsyncIterable<Buffer>) {
            for (const msg of parser.push(chunk)) {
              failures = 0; // the server answered with an event: the connection is healthy
              if (msg.id !== '') lastId = msg.id;
              yield msg;
            }
          }
          parser.end(); // an unterminated last block is dropped; the server replays it on resume
          lastError = undefined; // the server ended the stream (shutdown, operator deleted, ...)
        }
      } catch (err) {
        if (signal?.aborted) return;
        if (err instanceof ApiError || err instanceof ApiResponseError) throw err;
        lastError = err;
      } finally {
        if (body && !body.destroyed) body.destroy();
      }
      if (signal?.aborted) return;
      failures++;
      const delayMs = retryAfterMs ?? reconnectDelayMs(policy, failures);
      log.debug(
        {
          url: conn.url,
          attempt: failures,
          delay_ms: delayMs,
          err: lastError instanceof Error ? lastError.message : undefined,
        },
        'event stream reconnect',
      );
      opts.onReconnect?.({
        attempt: failures,
        delayMs,
        ...(lastError !== undefined ? { error: lastError } : {}),
      });
      try {
        await sleep(delayMs, undefined, signal ? { signal } : undefined);
      } catch {
        return; // aborted while waiting
      }
    }
  } finally {
    if (own) await own.destroy().catch(() => undefined);
  }
}
