import type { ServerResponse } from 'node:http';
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
  encode?: (type: WatchEventType, object: unknown) => unknown;
}

interface Watcher {
  req: WatchRequest;
  res: ServerResponse;
  resource: string;
  /** A hung stream never writes again: it models a half-open TCP connection. */
  hung: boolean;
  timers: NodeJS.Timeout[];
}

export class WatchHub {
  private readonly watchers = new Set<Watcher>();
  private hanging = false;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly store: Store,
    private readonly bookmarkIntervalMs: number,
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
    const w: Watcher = { req, res, resource: resourceKey(req.def), hung: this.hanging, timers: [] };
    this.watchers.add(w);
    res.on('close', () => this.forget(w));
    if (w.hung) return;

    if (req.resourceVersion === undefined || req.sendInitialEvents) {
      for (const obj of this.store.list(w.resource, req.namespace)) {
        if (matches(req.filter, obj)) this.write(w, 'ADDED', obj);
      }
      if (req.sendInitialEvents) {
        this.write(w, 'BOOKMARK', this.bookmarkObject(req.def, { 'k8s.io/initial-events-end': 'true' }));
      }
    } else {
      const history = this.store.eventsSince(req.resourceVersion);
      if (!history) {
        const status = errors.expired(
          `too old resource version: ${req.resourceVersion} (${this.store.oldestAvailableRv()})`,
        ).status;
        this.write(w, 'ERROR', status);
        res.end();
        return;
      }
      for (const ev of history) this.deliver(w, ev);
    }

    if (req.allowBookmarks) {
      w.timers.push(
        setInterval(() => {
          if (!w.hung) this.write(w, 'BOOKMARK', this.bookmarkObject(req.def));
        }, this.bookmarkIntervalMs),
      );
    }
    if (req.timeoutSeconds !== undefined && req.timeoutSeconds > 0) {
      w.timers.push(
        setTimeout(() => {
          if (!w.hung) res.end();
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
    this.watchers.delete(w);
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

  /** The watch cache's selector transitions (cacheWatcher.convertToWatchEvent). */
  private deliver(w: Watcher, ev: StoreEvent): void {
    if (w.hung || ev.resource !== w.resource) return;
    if (w.req.namespace && ev.object.metadata.namespace !== w.req.namespace) return;
    const f = w.req.filter;
    const cur = ev.type !== 'DELETED' && matches(f, ev.object);
    const old = ev.prev !== undefined && matches(f, ev.prev);
    if (ev.type === 'DELETED') {
      if (old) this.write(w, 'DELETED', ev.object);
    } else if (cur && !old) {
      this.write(w, 'ADDED', ev.object);
    } else if (cur && old) {
      this.write(w, 'MODIFIED', ev.object);
    } else if (!cur && old && ev.prev) {
      // Leaving the selection: the previous content, stamped with this event's RV.
      const gone: KubeObject = {
        ...ev.prev,
        metadata: { ...ev.prev.metadata, resourceVersion: String(ev.rv) },
      };
      this.write(w, 'DELETED', gone);
    }
  }

  private write(w: Watcher, type: WatchEventType, object: unknown): void {
    if (w.res.writableEnded || w.res.destroyed) return;
    const out = w.req.encode ? w.req.encode(type, object) : object;
    w.res.write(`${JSON.stringify({ type, object: out })}\n`);
  }
}
