import { request } from 'node:http';
import { afterEach } from 'vitest';
import { startKubesim, type Kubesim, type KubesimOptions } from '../../src/kubesim/index.js';

/** Starts a kubesim that is stopped after the current test. */
export function useSim(): (opts?: KubesimOptions) => Promise<Kubesim> {
  const sims: Kubesim[] = [];
  afterEach(async () => {
    await Promise.all(sims.splice(0).map((s) => s.stop()));
  });
  return async (opts) => {
    const sim = await startKubesim({ bookmarkIntervalMs: 50, namespaceFinalizeDelayMs: 20, ...opts });
    sims.push(sim);
    return sim;
  };
}

/** Parsed JSON from the wire, read freely by assertions (the tests check shapes themselves). */
export type Loose = any;

export interface Res {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Loose;
}

/** One HTTP call; bodies are JSON unless a content type says otherwise. */
export async function api(
  sim: Kubesim,
  method: string,
  path: string,
  body?: unknown,
  opts: { token?: string | null; contentType?: string; headers?: Record<string, string> } = {},
): Promise<Res> {
  const token = opts.token === undefined ? sim.adminToken : opts.token;
  const headers: Record<string, string> = {
    'Content-Type': opts.contentType ?? 'application/json',
    ...opts.headers,
  };
  if (token !== null) headers['Authorization'] = `Bearer ${token}`;
  const res = await fetch(sim.url + path, {
    method,
    headers,
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // non-JSON (healthz)
  }
  return { status: res.status, headers: Object.fromEntries(res.headers.entries()), body: parsed };
}

export function svc(name: string, extra: Record<string, unknown> = {}, labels?: Record<string, string>) {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, ...(labels ? { labels } : {}) },
    spec: { ports: [{ port: 80 }], ...extra },
  };
}

export async function createSvc(sim: Kubesim, ns: string, name: string, labels?: Record<string, string>) {
  const r = await api(sim, 'POST', `/api/v1/namespaces/${ns}/services`, svc(name, {}, labels));
  if (r.status !== 201) throw new Error(`create ${name}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

export async function createNs(sim: Kubesim, name: string) {
  const r = await api(sim, 'POST', '/api/v1/namespaces', { metadata: { name } });
  if (r.status !== 201) throw new Error(`create ns ${name}: ${r.status}`);
  return r.body;
}

export interface WatchEvent {
  type: string;
  object: Loose;
}

/** An open watch stream over raw HTTP collecting events; `ended` resolves on close or error. */
export interface WatchStream {
  status: number;
  events: WatchEvent[];
  ended: Promise<'end' | 'error'>;
  waitFor(pred: (evs: WatchEvent[]) => boolean, timeoutMs?: number): Promise<WatchEvent[]>;
  close(): void;
}

export function openWatch(sim: Kubesim, path: string, token = sim.adminToken): Promise<WatchStream> {
  return new Promise((resolve, reject) => {
    const url = new URL(sim.url + path);
    const events: WatchEvent[] = [];
    const waiters = new Set<() => void>();
    const req = request(url, { headers: { Authorization: `Bearer ${token}` } }, (res) => {
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
        for (const w of waiters) w();
      });
      res.on('end', () => endResolve('end'));
      res.on('error', () => endResolve('error'));
      res.on('close', () => endResolve(res.complete ? 'end' : 'error'));
      req.on('error', () => endResolve('error'));
      resolve({
        status: res.statusCode ?? 0,
        events,
        ended,
        waitFor(pred, timeoutMs = 3000) {
          return new Promise((ok, fail) => {
            const check = () => {
              if (pred(events)) {
                waiters.delete(check);
                clearTimeout(timer);
                ok(events);
              }
            };
            const timer = setTimeout(() => {
              waiters.delete(check);
              fail(new Error(`watch condition not met; got ${JSON.stringify(events.map((e) => e.type))}`));
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

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
