import type { ServerResponse } from 'node:http';
import type { Logger } from '../log/logger.js';
import type { ResourceDef } from './resources/registry.js';
import { apiVersionOf, resourceKey } from './resources/registry.js';
import { matches, type ObjectFilter } from './selectors.js';
import { errors } from './status.js';
import type { Store, StoreEvent } from './store.js';
import type { KubeObject, WatchEventType } from './types.js';

/**
 * Watch streams as the apiserver's watch cache serves them: newline-delimited JSON events,
 * selector transitions turned into ADDED/DELETED, BOOKMARKs on request, server-side timeout,
 * and a 410 ERROR event when the requested history has been compacted.
 *
 * Each stream honours backpressure: the initial state is written as the client reads it, and live
 * events wait in a per-watcher queue while the socket is full. A queue that grows past
 * `bufferBytes` means the client cannot keep up: like the watch cache's cacheWatcher, the watch is
 * then terminated (a clean end of the stream, queued events dropped) and the client re-watches
 * from the last resourceVersion it saw. Bookmarks are skipped while anything is queued, so a
 * bookmark never claims an RV whose events the client has not received.
 */

export interface WatchRequest {
  def: ResourceDef;
  namespace: string | undefined;
  filter: ObjectFilter;
  /** Undefined means "current state as ADDED, then live" (no RV, or RV "0"). */
  resourceVersion: number | undefined;
  allowBookmarks: boolean;
  timeoutSeconds: number | undefined;
  /** sendInitialEvents=true: synthetic ADDED, then a BOOKMARK marking the end of the initial state. */
  sendInitialEvents: boolean;
  /** Re-encodes each event's object (server-side printing: Tables); see table/. */
  encode?: ((type: WatchEventType, object: unknown) => unknown) | undefined;
}

interface Line {
  type: WatchEventType;
  object: unknown;
}

interface Watcher {
  req: WatchRequest;
  res: ServerResponse;
  resource: string;
  /** A hung stream never writes again: it models a half-open TCP connection. */
  hung: boolean;
  timers: NodeJS.Timeout[];
  /** Initial state or history replay not yet written (serialised lazily, as the client reads). */
  initial: Line[];
  /** Live events waiting for the socket to drain, already serialised. */
  queue: string[];
  queuedBytes: number;
  /** Waiting for 'drain' before writing more. */
  blocked: boolean;
  /** Ended (timeout, slow reader, compacted RV): nothing more is written. */
  done: boolean;
  /** The RV the stream started from: a bookmark is sent only once the store has moved past it. */
  startRv: number;
}

export interface WatchHubOptions {
  bookmarkIntervalMs: number;
  /** Live-event bytes a watcher may have queued before it is closed as too slow. */
  bufferBytes: number;
  log: Logger;
}

export class WatchHub {
  private readonly watchers = new Set<Watcher>();
  private hanging = false;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly store: Store,
    private readonly opts: WatchHubOptions,
  ) {
    this.unsubscribe = store.subscribe((ev) => {
      for (const w of this.watchers) this.deliver(w, ev);
    });
  }

  serve(req: WatchRequest, res: ServerResponse): void {
    res.writeHead(200, {
      'Content-Type': 'application/json',
      'Cache-Control': 'no-cache, private',
      'Transfer-Encoding': 'chunked',
    });
    // Headers go out at once, as the apiserver flushes them before the first event.
    res.flushHeaders();
    const w: Watcher = {
      req,
      res,
      resource: resourceKey(req.def),
      hung: this.hanging,
      timers: [],
      initial: [],
      queue: [],
      queuedBytes: 0,
      blocked: false,
      done: false,
      startRv: req.resourceVersion ?? this.store.currentRv(),
    };
    this.watchers.add(w);
    res.on('close', () => this.forget(w));
    res.on('drain', () => {
      w.blocked = false;
      this.pump(w);
    });
    if (w.hung) return;

    if (req.resourceVersion === undefined || req.sendInitialEvents) {
      // Stored objects are never modified (a write stores a new one), so the lines may share them.
      for (const obj of this.store.view(w.resource, req.namespace)) {
        if (matches(req.filter, obj)) w.initial.push({ type: 'ADDED', object: obj });
      }
      // Without bookmarks allowed the initial state simply flows into the live events.
      if (req.sendInitialEvents && req.allowBookmarks) {
        w.initial.push({
          type: 'BOOKMARK',
          object: this.bookmarkObject(req.def, { 'k8s.io/initial-events-end': 'true' }),
        });
      }
    } else {
      const history = this.store.eventsSince(req.resourceVersion);
      if (!history) {
        const status = errors.expired(
          `too old resource version: ${req.resourceVersion} (${this.store.oldestAvailableRv()})`,
        ).status;
        w.initial.push({ type: 'ERROR', object: status });
        this.pump(w);
        this.end(w);
        return;
      }
      for (const ev of history) w.initial.push(...this.convert(w, ev));
    }
    this.pump(w);

    if (req.allowBookmarks) {
      w.timers.push(
        setInterval(() => {
          // Like the cacher's non-blocking bookmark: skipped while the client is behind, and
          // (cacheWatcher) never at or below the RV the watch started from.
          if (w.hung || w.blocked || w.initial.length || w.queue.length) return;
          if (this.store.currentRv() <= w.startRv) return;
          this.writeLine(w, this.line(w, 'BOOKMARK', this.bookmarkObject(req.def)));
        }, this.opts.bookmarkIntervalMs),
      );
    }
    if (req.timeoutSeconds !== undefined && req.timeoutSeconds > 0) {
      w.timers.push(
        setTimeout(() => {
          if (!w.hung) this.end(w);
        }, req.timeoutSeconds * 1000),
      );
    }
  }

  /** Abruptly destroys every open watch connection (no final chunk: the client sees a reset). */
  dropAll(): void {
    for (const w of [...this.watchers]) {
      w.res.socket?.destroy();
      w.res.destroy();
      this.forget(w);
    }
  }

  /** While on, open and new watches go silent for good; turning it off affects new watches only. */
  hang(on: boolean): void {
    this.hanging = on;
    if (on) for (const w of this.watchers) w.hung = true;
  }

  close(): void {
    this.dropAll();
  }

  dispose(): void {
    this.close();
    this.unsubscribe();
  }

  private forget(w: Watcher): void {
    for (const t of w.timers) clearTimeout(t);
    w.timers = [];
    w.initial = [];
    w.queue = [];
    w.queuedBytes = 0;
    this.watchers.delete(w);
  }

  /** Ends the stream cleanly after what was already handed to the socket; drops the rest. */
  private end(w: Watcher): void {
    if (w.done) return;
    w.done = true;
    this.forget(w);
    if (!w.res.writableEnded && !w.res.destroyed) w.res.end();
  }

  /** Writes initial lines, then queued live lines, until the socket asks us to wait. */
  private pump(w: Watcher): void {
    while (!w.blocked && !w.done && !w.hung) {
      const first = w.initial.shift();
      let text: string | undefined;
      if (first) text = this.line(w, first.type, first.object);
      else {
        text = w.queue.shift();
        if (text !== undefined) w.queuedBytes -= Buffer.byteLength(text);
      }
      if (text === undefined) return;
      this.writeLine(w, text);
    }
  }

  private writeLine(w: Watcher, text: string): void {
    if (w.res.writableEnded || w.res.destroyed) return;
    if (!w.res.write(text)) w.blocked = true;
  }

  private line(w: Watcher, type: WatchEventType, object: unknown): string {
    const out = w.req.encode ? w.req.encode(type, object) : object;
    return `${JSON.stringify({ type, object: out })}\n`;
  }

  /** A BOOKMARK carries only kind, apiVersion and the RV the watcher has been brought up to. */
  private bookmarkObject(def: ResourceDef, annotations?: Record<string, string>): Record<string, unknown> {
    return {
      kind: def.kind,
      apiVersion: apiVersionOf(def),
      metadata: {
        resourceVersion: String(this.store.currentRv()),
        ...(annotations ? { annotations } : {}),
      },
    };
  }

  /** A live event: straight to the socket when nothing waits, else queued (and bounded). */
  private deliver(w: Watcher, ev: StoreEvent): void {
    if (w.hung || w.done) return;
    // A watch from a future RV sees nothing up to it.
    if (ev.rv <= w.startRv) return;
    for (const { type, object } of this.convert(w, ev)) {
      const text = this.line(w, type, object);
      if (!w.blocked && !w.initial.length && !w.queue.length) {
        this.writeLine(w, text);
        continue;
      }
      w.queue.push(text);
      w.queuedBytes += Buffer.byteLength(text);
      if (w.queuedBytes > this.opts.bufferBytes) {
        this.opts.log.info(
          {
            resource: w.resource,
            namespace: w.req.namespace,
            queuedBytes: w.queuedBytes,
            queuedEvents: w.queue.length,
            bufferBytes: this.opts.bufferBytes,
          },
          'kubesim closed a slow watcher',
        );
        this.end(w);
        return;
      }
    }
  }

  /** The watch cache's selector transitions (cacheWatcher.convertToWatchEvent). */
  private convert(w: Watcher, ev: StoreEvent): Line[] {
    if (ev.resource !== w.resource) return [];
    if (w.req.namespace && ev.object.metadata.namespace !== w.req.namespace) return [];
    const f = w.req.filter;
    const cur = ev.type !== 'DELETED' && matches(f, ev.object);
    const old = ev.prev !== undefined && matches(f, ev.prev);
    if (ev.type === 'DELETED') return old ? [{ type: 'DELETED', object: ev.object }] : [];
    if (cur && !old) return [{ type: 'ADDED', object: ev.object }];
    if (cur && old) return [{ type: 'MODIFIED', object: ev.object }];
    if (!cur && old && ev.prev) {
      // Leaving the selection: the previous content, stamped with this event's RV.
      const gone: KubeObject = {
        ...ev.prev,
        metadata: { ...ev.prev.metadata, resourceVersion: String(ev.rv) },
      };
      return [{ type: 'DELETED', object: gone }];
    }
    return [];
  }
}
