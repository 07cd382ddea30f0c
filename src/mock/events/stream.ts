import type { RequestContext } from '../http/context.js';
import { MockError } from '../http/errors.js';
import { ENDPOINT_EVENT, operatorEventHub, type OpenStream } from './hub.js';
import type { EndpointEvent } from './log.js';
import { formatSseComment, formatSseEvent } from './sse.js';

export const LAST_EVENT_ID_QUERY = 'last_event_id';

export interface StreamOptions {
  operatorId: string;
  /** The `data` object of one endpoint event, rendered for this stream's base URL. */
  renderEvent(event: EndpointEvent): unknown;
}

function requestedLastId(ctx: RequestContext): string | undefined {
  const header = ctx.req.headers['last-event-id'];
  const value = Array.isArray(header) ? header[0] : header;
  if (value !== undefined && value.trim() !== '') return value.trim();
  return ctx.query.get(LAST_EVENT_ID_QUERY);
}

/**
 * Serves an operator's notification stream (text/event-stream):
 *
 * 1. with a Last-Event-ID the log still covers, every later event is replayed, at the pace the
 *    client reads (only a client that stops reading is dropped, never a long replay);
 * 2. then `ready` (id = newest event id): the stream is live; or, when the id is older than the
 *    log keeps, newer than any event or not a number, `resync` (id = newest event id) instead,
 *    and the client must relist;
 * 3. then live events as they happen, and a `: heartbeat` comment after every idle heartbeat_ms.
 *
 * The subscription is taken before the replay is computed, in the same tick, so no event is
 * missed or sent twice between replay and live delivery.
 */
export function serveEventStream(ctx: RequestContext, opts: StreamOptions): 'streamed' {
  const { services, res, account } = ctx;
  const cfg = services.config.events;
  const hub = operatorEventHub(services);
  if (hub.streamCount(opts.operatorId) >= cfg.max_streams_per_operator) {
    throw new MockError(
      'ERR_610',
      `operator ${opts.operatorId} already has ${cfg.max_streams_per_operator} open event streams (the maximum)`,
      { operator: opts.operatorId },
      { 'retry-after': '1' },
    );
  }
  const log = hub.log(account.id);
  const requested = requestedLastId(ctx);

  let closed = false;
  let heartbeat: NodeJS.Timeout | undefined;
  /** Live events that arrived while the replay was still being written; sent after `ready`. */
  let backlog: { events: EndpointEvent[]; bytes: number } | undefined = { events: [], bytes: 0 };
  const dropSlowReader = (buffered: number): void => {
    ctx.log.warn(
      { operator: opts.operatorId, buffered_bytes: buffered },
      'event stream dropped: client not reading',
    );
    stream.close();
    res.destroy();
  };
  /** Writes one frame; true when the socket wants no more until 'drain'. */
  const write = (chunk: string): boolean => {
    if (closed) return false;
    const full = !res.write(chunk);
    heartbeat?.refresh();
    // A client that stops reading must not make the server buffer without end: drop the
    // stream; the client reconnects with Last-Event-ID and gets a replay or a resync.
    if (res.writableLength > cfg.max_buffered_bytes) dropSlowReader(res.writableLength);
    return full;
  };
  const frameOf = (event: EndpointEvent): string =>
    formatSseEvent({ id: event.id, event: event.type, data: JSON.stringify(opts.renderEvent(event)) });
  const onEvent = (event: EndpointEvent): void => {
    if (event.accountId !== account.id) return;
    if (!backlog) {
      write(frameOf(event));
      return;
    }
    backlog.events.push(event);
    backlog.bytes += Buffer.byteLength(JSON.stringify(event.endpoint));
    if (backlog.bytes + res.writableLength > cfg.max_buffered_bytes) {
      dropSlowReader(backlog.bytes + res.writableLength);
    }
  };
  const stream: OpenStream = {
    operatorId: opts.operatorId,
    res,
    close() {
      if (closed) return;
      closed = true;
      backlog = undefined;
      services.bus.off(ENDPOINT_EVENT, onEvent);
      if (heartbeat) clearTimeout(heartbeat);
      hub.remove(stream);
      if (!res.writableEnded) res.end();
    },
  };

  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  hub.add(stream);
  res.on('close', () => stream.close());
  services.bus.on(ENDPOINT_EVENT, onEvent);

  const head = log.lastId;
  let replay: EndpointEvent[] | undefined = [];
  let reason: 'expired' | 'unknown' | undefined;
  if (requested !== undefined) {
    replay = /^\d+$/.test(requested) ? log.since(Number(requested)) : undefined;
    if (!replay) {
      const n = Number(requested);
      reason = /^\d+$/.test(requested) && Number.isSafeInteger(n) && n <= head ? 'expired' : 'unknown';
    }
  }
  const opening = reason
    ? formatSseEvent({
        id: head,
        event: 'resync',
        data: JSON.stringify({ reason, requested_id: requested, last_event_id: head }),
      })
    : formatSseEvent({ id: head, event: 'ready', data: JSON.stringify({ last_event_id: head }) });
  heartbeat = setTimeout(function beat() {
    if (closed) return;
    res.write(formatSseComment('heartbeat'));
    heartbeat = setTimeout(beat, cfg.heartbeat_ms);
    heartbeat.unref();
  }, cfg.heartbeat_ms);
  heartbeat.unref();
  void replayThenGoLive(replay ?? [], opening);

  /**
   * The replay may be far larger than the slow-reader limit (a Last-Event-ID thousands of events
   * back), so it is written at the client's pace: after each frame the socket refuses, wait for
   * 'drain'. Live events meanwhile wait in `backlog` (bounded by the same limit) and follow
   * `ready` in order, so none is lost or sent twice.
   */
  async function replayThenGoLive(events: EndpointEvent[], last: string): Promise<void> {
    for (const event of events) {
      if (closed) return;
      if (write(frameOf(event))) await drained();
    }
    write(last);
    while (!closed && backlog && backlog.events.length > 0) {
      const pending = backlog.events;
      backlog = { events: [], bytes: 0 };
      for (const event of pending) if (write(frameOf(event))) await drained();
    }
    backlog = undefined;
  }

  function drained(): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        res.off('drain', done).off('close', done);
        resolve();
      };
      res.on('drain', done).on('close', done);
    });
  }
  ctx.log.debug({ operator: opts.operatorId, requested, head, resync: reason }, 'event stream opened');
  return 'streamed';
}
