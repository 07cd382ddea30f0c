import { Agent, request } from 'undici';
import { SseParser, type SseMessage } from '../../src/api/client/sse/parser.js';
import { conditionOf, pollUntil } from './wait.js';
import { budget } from './budget.js';

export interface RawStream {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** Error body when the status is not 200. */
  json: any;
  comments: string[];
  /** Resolves with the next message, or rejects after `timeoutMs` or when the stream ends. */
  next(timeoutMs?: number): Promise<SseMessage>;
  /** Collects `n` messages. */
  take(n: number, timeoutMs?: number): Promise<SseMessage[]>;
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  close(): void;
}

/** Opens an event stream with plain undici and parses it with the client's SSE parser. */
export async function openRawStream(
  base: string,
  path: string,
  apiKey: string,
  headers: Record<string, string> = {},
): Promise<RawStream> {
  const ac = new AbortController();
  // An agent of its own, destroyed on close, so no pooled socket outlives the stream.
  const agent = new Agent();
  const res = await request(base + path, {
    method: 'GET',
    dispatcher: agent,
    signal: ac.signal,
    headers: {
      authorization: `Bearer ${apiKey}`,
      'service-version': '2',
      accept: 'text/event-stream',
      ...headers,
    },
  });
  const comments: string[] = [];
  const queue: SseMessage[] = [];
  const waiters: ((m: SseMessage | undefined) => void)[] = [];
  let done = false;
  let json: unknown;
  let ended: Promise<void>;
  if (res.statusCode !== 200) {
    const text = await res.body.text();
    json = text ? JSON.parse(text) : undefined;
    done = true;
    ended = Promise.resolve();
    await agent.close();
  } else {
    const parser = new SseParser({ onComment: (t) => comments.push(t) });
    ended = (async () => {
      try {
        for await (const chunk of res.body as AsyncIterable<Buffer>) {
          for (const msg of parser.push(chunk)) {
            const w = waiters.shift();
            if (w) w(msg);
            else queue.push(msg);
          }
        }
      } catch {
        // aborted or reset
      } finally {
        done = true;
        for (const w of waiters.splice(0)) w(undefined);
      }
    })();
  }
  const next = (quietMs = 5000): Promise<SseMessage> => {
    const timeoutMs = budget(quietMs);
    const queued = queue.shift();
    if (queued) return Promise.resolve(queued);
    if (done) return Promise.reject(new Error('stream ended'));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        const i = waiters.indexOf(waiter);
        if (i >= 0) waiters.splice(i, 1);
        reject(new Error(`no event within ${timeoutMs} ms`));
      }, timeoutMs);
      const waiter = (m: SseMessage | undefined) => {
        clearTimeout(timer);
        if (m) resolve(m);
        else reject(new Error('stream ended'));
      };
      waiters.push(waiter);
    });
  };
  return {
    status: res.statusCode,
    headers: res.headers,
    json,
    comments,
    next,
    async take(n, timeoutMs) {
      const out: SseMessage[] = [];
      for (let i = 0; i < n; i++) out.push(await next(timeoutMs));
      return out;
    },
    ended,
    close: () => {
      ac.abort();
      void agent.destroy().catch(() => undefined);
    },
  };
}

/** Polls `check` every 10 ms, for about `tries` × 10 ms (scaled; ./wait.ts). */
export async function eventually(
  check: () => boolean,
  tries = 300,
  what = conditionOf(check),
): Promise<void> {
  await pollUntil(what, check, (v) => v, { timeoutMs: tries * 10, intervalMs: 10, onError: 'throw' });
}
