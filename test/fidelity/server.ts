import { randomBytes } from 'node:crypto';
import type { KubeConfig } from '@kubernetes/client-node';
import { Agent, request } from 'undici';
import { openWatchStream, type WatchEvent, type WatchStream as BaseStream } from '../helpers/watch-stream.js';
import { pollUntil } from '../helpers/wait.js';

/**
 * An API server under test: kubesim or a real kube-apiserver, behind one interface, so that each
 * fidelity test body (test/fidelity/*.ts) is written once and run against both. Where the two
 * differ on purpose, a test branches on `kind` and asserts the divergence docs/kubesim.md
 * ("Divergences from kube-apiserver") describes.
 */
export type ServerKind = 'kubesim' | 'kube-apiserver';

/** Parsed JSON from the wire, read freely by assertions (the tests check shapes themselves). */
export type Loose = any;

export interface Res {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Loose;
}

export interface CallOptions {
  /** A bearer token; the admin's by default, `null` for none. */
  token?: string | null;
  contentType?: string;
  headers?: Record<string, string>;
}

export type { WatchEvent } from '../helpers/watch-stream.js';

/** An open watch stream; `waitFor` names what it waits for in its failure. */
export interface WatchStream extends Omit<BaseStream, 'waitFor'> {
  waitFor(pred: (evs: WatchEvent[]) => boolean, what: string, timeoutMs?: number): Promise<WatchEvent[]>;
}

export interface FidelityServer {
  readonly kind: ServerKind;
  readonly url: string;
  readonly caPem: string;
  readonly adminToken: string;
  api(method: string, path: string, body?: unknown, opts?: CallOptions): Promise<Res>;
  watch(path: string, opts?: CallOptions): Promise<WatchStream>;
  kubeConfig(token?: string): KubeConfig;
  writeKubeconfig(path: string, token?: string): Promise<void>;
  /** The bearer token of an existing ServiceAccount. */
  serviceAccountToken(namespace: string, name: string): Promise<string>;
  /** A fresh namespace of this test run, removed when the file ends. */
  namespace(prefix?: string): Promise<string>;
  /** Forgets the event history (kubesim's compact()); a real server has no such switch. */
  forgetHistory?(): void;
}

/** What an adapter provides; `fidelityServer` adds the shared HTTP plumbing. */
export interface ServerBackend {
  kind: ServerKind;
  url: string;
  caPem: string;
  adminToken: string;
  kubeConfig(token?: string): KubeConfig;
  writeKubeconfig(path: string, token?: string): Promise<void>;
  serviceAccountToken(namespace: string, name: string): Promise<string>;
  forgetHistory?(): void;
}

/** The shared plumbing over a backend: JSON calls, watches and namespaces of this run. */
export function fidelityServer(backend: ServerBackend): FidelityServer & { cleanup(): Promise<void> } {
  const dispatcher = new Agent({ connect: { ca: backend.caPem } });
  const run = randomBytes(3).toString('hex');
  const namespaces: string[] = [];
  const headersFor = (opts: CallOptions, body: unknown): Record<string, string> => {
    const token = opts.token === undefined ? backend.adminToken : opts.token;
    return {
      accept: 'application/json',
      ...(body === undefined ? {} : { 'content-type': opts.contentType ?? 'application/json' }),
      ...(token === null ? {} : { authorization: `Bearer ${token}` }),
      ...opts.headers,
    };
  };
  const api = async (method: string, path: string, body?: unknown, opts: CallOptions = {}): Promise<Res> => {
    const r = await request(backend.url + path, {
      method: method as 'GET',
      dispatcher,
      headers: headersFor(opts, body),
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
    const text = await r.body.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // plain text (healthz, impersonation errors)
    }
    return { status: r.statusCode, headers: r.headers, body: parsed };
  };
  return {
    ...backend,
    api,
    watch: (path, opts = {}) => openWatch(backend.url + path, backend.caPem, headersFor(opts, undefined)),
    async namespace(prefix = 'fid') {
      const name = `${prefix}-${run}-${namespaces.length}`;
      const r = await api('POST', '/api/v1/namespaces', { metadata: { name } });
      if (r.status !== 201)
        throw new Error(`create namespace ${name}: ${r.status} ${JSON.stringify(r.body)}`);
      namespaces.push(name);
      return name;
    },
    async cleanup() {
      // Deleting is enough: the namespace controller (or kubesim) removes the content later.
      for (const ns of namespaces.splice(0)) await api('DELETE', `/api/v1/namespaces/${ns}`).catch(() => {});
      await dispatcher.close();
    },
  };
}

async function openWatch(url: string, ca: string, headers: Record<string, string>): Promise<WatchStream> {
  const stream = await openWatchStream(url, { ca, headers });
  return {
    ...stream,
    waitFor: (pred, what, timeoutMs = 10_000) => stream.waitFor(pred, timeoutMs, `watch: ${what}`),
  };
}

/** Waits until `check` returns a value (polling), or fails naming `what` and the last value seen. */
export async function eventually<T>(
  what: string,
  check: () => Promise<T | undefined>,
  timeoutMs = 30_000,
): Promise<T> {
  const v = await pollUntil(what, check, (x) => x !== undefined, {
    timeoutMs,
    intervalMs: 100,
    onError: 'throw',
  });
  return v as T;
}

/** An object without the fields only a real server writes (managedFields), for shape comparisons. */
export function withoutManagedFields(obj: Loose): Loose {
  if (!obj?.metadata?.managedFields) return obj;
  const { managedFields: _m, ...metadata } = obj.metadata;
  return { ...obj, metadata };
}
