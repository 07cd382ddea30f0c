import { afterEach } from 'vitest';
import { startKubesim, type Kubesim, type KubesimOptions } from '../../src/kubesim/index.js';
import { openWatchStream, type WatchStream } from '../helpers/watch-stream.js';

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
    body: body === undefined ? null : typeof body === 'string' ? body : JSON.stringify(body),
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

export type { WatchEvent, WatchStream } from '../helpers/watch-stream.js';

/** An open watch stream over raw HTTP collecting events; `ended` resolves on close or error. */
export function openWatch(sim: Kubesim, path: string, token = sim.adminToken): Promise<WatchStream> {
  return openWatchStream(sim.url + path, { headers: { Authorization: `Bearer ${token}` } });
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
