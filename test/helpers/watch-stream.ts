import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { budget } from './budget.js';

/**
 * A raw watch stream (newline-delimited JSON events) over http or https, collecting events as they
 * arrive, for tests that look at the wire: kubesim's own tests and the fidelity suite.
 */
export interface WatchEvent {
  type: string;
  // Parsed JSON from the wire, read freely by assertions.
  object: any;
}

export interface WatchStream {
  status: number;
  events: WatchEvent[];
  /** Resolves on a clean end ('end') or a reset ('error'). */
  ended: Promise<'end' | 'error'>;
  /** Resolves once `pred` holds; fails after `timeoutMs` naming `what` and the events seen. */
  waitFor(pred: (evs: WatchEvent[]) => boolean, timeoutMs?: number, what?: string): Promise<WatchEvent[]>;
  close(): void;
}

export function openWatchStream(
  url: string,
  opts: { headers?: Record<string, string>; ca?: string } = {},
): Promise<WatchStream> {
  const request = url.startsWith('https:') ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const events: WatchEvent[] = [];
    const waiters = new Set<() => void>();
    const wake = () => {
      for (const w of waiters) w();
    };
    const req = request(url, { headers: opts.headers ?? {}, ...(opts.ca ? { ca: opts.ca } : {}) }, (res) => {
      let buf = '';
      let endResolve: (v: 'end' | 'error') => void = () => {};
      const ended = new Promise<'end' | 'error'>((r) => (endResolve = r));
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buf += chunk;
        let i: number;
        while ((i = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, i);
          buf = buf.slice(i + 1);
          if (line.trim()) events.push(JSON.parse(line) as WatchEvent);
        }
        wake();
      });
      res.on('end', () => {
        if (buf.trim()) events.push(JSON.parse(buf) as WatchEvent);
        endResolve('end');
        wake();
      });
      res.on('error', () => endResolve('error'));
      res.on('close', () => endResolve(res.complete ? 'end' : 'error'));
      req.on('error', () => endResolve('error'));
      resolve({
        status: res.statusCode ?? 0,
        events,
        ended,
        waitFor(pred, quietMs = 3000, what = 'watch condition') {
          const timeoutMs = budget(quietMs);
          return new Promise((ok, fail) => {
            const check = () => {
              if (!pred(events)) return;
              waiters.delete(check);
              clearTimeout(timer);
              ok(events);
            };
            const timer = setTimeout(() => {
              waiters.delete(check);
              const seen = events.map((e) => `${e.type} ${e.object?.metadata?.name ?? ''}`.trim());
              fail(new Error(`${what} not met within ${timeoutMs} ms; got ${JSON.stringify(seen)}`));
            }, timeoutMs);
            waiters.add(check);
            check();
          });
        },
        close() {
          req.destroy();
        },
      });
    });
    req.on('error', reject);
    req.end();
  });
}
