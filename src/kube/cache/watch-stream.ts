import { StringDecoder } from 'node:string_decoder';
import type { Clock } from '../../time/clock.js';
import { errorFromResponse, errorFromStatus } from '../errors.js';
import { StatusSchema, WatchEventSchema } from '../objects.js';
import type { KubeTransport, QueryValue } from '../transport.js';

/** A watch event other than ERROR (ERROR ends the stream and is reported in `WatchEnd`). */
export interface StreamEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK';
  object: unknown;
}

export type WatchEnd =
  /** The server ended the response normally (timeoutSeconds elapsed, or it just closed). */
  | { kind: 'closed'; events: number }
  /** HTTP error status, in-stream ERROR event (a KubeApiError), or a network failure. */
  | { kind: 'error'; error: unknown; events: number }
  /** No bytes at all (not even bookmarks) for `inactivityMs`: the stream was torn down. */
  | { kind: 'inactive'; events: number }
  /** The caller's signal aborted. */
  | { kind: 'aborted'; events: number };

export interface WatchStreamOptions {
  transport: KubeTransport;
  path: string;
  resourceVersion: string;
  timeoutSeconds: number;
  labelSelector?: string | undefined;
  fieldSelector?: string | undefined;
  inactivityMs: number;
  clock: Clock;
  signal: AbortSignal;
  /** Synchronous; called for each event in order. */
  onEvent: (ev: StreamEvent) => void;
  /** Called on every chunk of bytes (including bookmarks and blank keep-alives). */
  onActivity?: () => void;
  onMalformed?: (line: string) => void;
}

const INACTIVE = 'watch-inactive';

/**
 * One watch request from `resourceVersion` with bookmarks and a server-side timeout, read as
 * newline-delimited JSON, guarded by an inactivity watchdog. Resolves (never rejects) with why
 * it ended; the caller decides whether to re-watch, relist or back off.
 */
export async function runWatch(opts: WatchStreamOptions): Promise<WatchEnd> {
  const local = new AbortController();
  const onOuterAbort = (): void => local.abort(opts.signal.reason);
  if (opts.signal.aborted) return { kind: 'aborted', events: 0 };
  opts.signal.addEventListener('abort', onOuterAbort, { once: true });
  let events = 0;
  let lastActivity = opts.clock.now();
  const endKind = (fallback: WatchEnd): WatchEnd => {
    if (opts.signal.aborted) return { kind: 'aborted', events };
    if (local.signal.reason === INACTIVE) return { kind: 'inactive', events };
    return fallback;
  };

  // Watchdog: polls the time of the last byte; also covers a server that never sends headers.
  const watchdogStop = new AbortController();
  const watchdog = (async () => {
    const tick = Math.max(10, Math.min(1000, Math.floor(opts.inactivityMs / 4)));
    while (!watchdogStop.signal.aborted) {
      await opts.clock.sleep(tick, watchdogStop.signal);
      if (watchdogStop.signal.aborted) return;
      if (opts.clock.now() - lastActivity > opts.inactivityMs) {
        local.abort(INACTIVE);
        return;
      }
    }
  })();

  try {
    const query: Record<string, QueryValue> = {
      watch: 1,
      resourceVersion: opts.resourceVersion || undefined,
      allowWatchBookmarks: true,
      timeoutSeconds: Math.max(1, Math.round(opts.timeoutSeconds)),
      labelSelector: opts.labelSelector,
      fieldSelector: opts.fieldSelector,
    };
    let res;
    try {
      res = await opts.transport.open({
        path: opts.path,
        query,
        signal: local.signal,
        // The watchdog bounds the wait for headers; this is only a backstop.
        timeoutMs: opts.inactivityMs * 2,
      });
    } catch (error) {
      return endKind({ kind: 'error', error, events });
    }
    lastActivity = opts.clock.now();
    opts.onActivity?.();
    if (res.statusCode !== 200) {
      const chunks: Buffer[] = [];
      const ok = await new Promise<boolean>((resolve) => {
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve(true));
        res.on('error', () => resolve(false));
        res.on('close', () => resolve(false));
      });
      const body = ok ? Buffer.concat(chunks).toString('utf8') : undefined;
      return endKind({
        kind: 'error',
        error: errorFromResponse(res.statusCode ?? 0, body, res.headers['retry-after']),
        events,
      });
    }

    return await new Promise<WatchEnd>((resolve) => {
      const decoder = new StringDecoder('utf8');
      let buffer = '';
      let done = false;
      const finish = (end: WatchEnd): void => {
        if (done) return;
        done = true;
        res.destroy();
        resolve(end);
      };
      const handleLine = (line: string): void => {
        if (line.trim() === '') return;
        let decoded: unknown;
        try {
          decoded = JSON.parse(line);
        } catch {
          opts.onMalformed?.(line);
          return;
        }
        const ev = WatchEventSchema.safeParse(decoded);
        if (!ev.success) {
          opts.onMalformed?.(line);
          return;
        }
        if (ev.data.type === 'ERROR') {
          const st = StatusSchema.safeParse(ev.data.object);
          const error = st.success
            ? errorFromStatus(st.data, 500)
            : errorFromResponse(500, JSON.stringify(ev.data.object));
          finish({ kind: 'error', error, events });
          return;
        }
        events++;
        try {
          opts.onEvent({ type: ev.data.type, object: ev.data.object });
        } catch (error) {
          finish({ kind: 'error', error, events });
        }
      };
      res.on('data', (chunk: Buffer) => {
        if (done) return;
        lastActivity = opts.clock.now();
        opts.onActivity?.();
        buffer += decoder.write(chunk);
        let nl = buffer.indexOf('\n');
        while (nl >= 0 && !done) {
          const line = buffer.slice(0, nl);
          buffer = buffer.slice(nl + 1);
          handleLine(line);
          nl = buffer.indexOf('\n');
        }
      });
      res.on('end', () => {
        buffer += decoder.end();
        if (!done && buffer.trim() !== '') handleLine(buffer);
        finish(endKind({ kind: 'closed', events }));
      });
      res.on('error', (error) => finish(endKind({ kind: 'error', error, events })));
      res.on('close', () => {
        const error = Object.assign(new Error('watch stream closed before its end'), {
          code: 'ERR_STREAM_PREMATURE_CLOSE',
        });
        finish(endKind({ kind: 'error', error, events }));
      });
    });
  } finally {
    watchdogStop.abort();
    opts.signal.removeEventListener('abort', onOuterAbort);
    if (!local.signal.aborted) local.abort('watch-finished');
    await watchdog;
  }
}
