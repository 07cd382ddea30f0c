import http from 'node:http';
import https from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import type { z } from 'zod';
import { errorFromResponse } from './errors.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
export type QueryValue = string | number | boolean | undefined;

export interface KubeRequest {
  method?: HttpMethod;
  /** Path below the cluster server URL, e.g. `/api/v1/namespaces/ns/services`. */
  path: string;
  query?: Record<string, QueryValue>;
  /** JSON-serialised unless it is already a string. */
  body?: unknown;
  /** Defaults to `application/json` when there is a body. */
  contentType?: string;
  /** Extra request headers (e.g. `Impersonate-User` for `check`). */
  headers?: Record<string, string>;
  signal?: AbortSignal;
  /**
   * For `request`/`json`: a deadline for the whole exchange. For `open` (streams): a deadline
   * for the response headers only. Defaults to the transport's `timeoutMs`.
   */
  timeoutMs?: number;
}

export interface KubeResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface TransportOptions {
  /** Default per-request deadline (ms); 30 s. */
  timeoutMs?: number;
}

function abortError(reason: unknown): Error {
  if (reason instanceof Error) return reason;
  const e = new Error(typeof reason === 'string' ? reason : 'The operation was aborted');
  e.name = 'AbortError';
  return e;
}

/**
 * HTTP to the Kubernetes API with the kubeconfig's auth and TLS settings (client-node's
 * `applyToHTTPSOptions`, so tokens from files and exec plugins are refreshed per request). One
 * agent is reused for the transport's lifetime (client-node 1.4 makes a new one per call, #2893).
 */
export class KubeTransport {
  private agent: http.Agent | undefined;
  private readonly keepAlive = {
    http: new http.Agent({ keepAlive: true, maxFreeSockets: 64 }),
    https: new https.Agent({ keepAlive: true, maxFreeSockets: 64 }),
  };
  private readonly timeoutMs: number;

  constructor(
    readonly kubeConfig: KubeConfig,
    opts: TransportOptions = {},
  ) {
    this.timeoutMs = opts.timeoutMs ?? 30_000;
  }

  private async prepare(
    req: KubeRequest,
  ): Promise<{ url: URL; options: https.RequestOptions; payload?: string }> {
    const cluster = this.kubeConfig.getCurrentCluster();
    if (!cluster) throw new Error('kubeconfig has no current cluster');
    const options: https.RequestOptions = {};
    await this.kubeConfig.applyToHTTPSOptions(options);
    const url = new URL(cluster.server.replace(/\/+$/, '') + req.path);
    if (cluster.proxyUrl) {
      // A proxy agent from the kubeconfig: keep the first one for every request.
      if (!this.agent && options.agent instanceof http.Agent) this.agent = options.agent;
      options.agent = this.agent ?? options.agent;
    } else {
      // client-node makes a fresh agent without keep-alive on every call; a controller writing
      // thousands of objects must not pay a TCP (and TLS) handshake per request. The TLS material
      // stays on the request options, which the https agent keys its pool by.
      options.agent = url.protocol === 'http:' ? this.keepAlive.http : this.keepAlive.https;
    }
    for (const [k, v] of Object.entries(req.query ?? {})) {
      if (v !== undefined) url.searchParams.set(k, String(v));
    }
    const base: http.OutgoingHttpHeaders =
      options.headers && !Array.isArray(options.headers) ? (options.headers as http.OutgoingHttpHeaders) : {};
    const headers: http.OutgoingHttpHeaders = { ...base, ...req.headers, Accept: 'application/json' };
    let payload: string | undefined;
    if (req.body !== undefined) {
      payload = typeof req.body === 'string' ? req.body : JSON.stringify(req.body);
      headers['Content-Type'] = req.contentType ?? 'application/json';
      headers['Content-Length'] = Buffer.byteLength(payload);
    }
    options.headers = headers;
    options.method = req.method ?? 'GET';
    return payload === undefined ? { url, options } : { url, options, payload };
  }

  /**
   * Sends the request and resolves with the response once headers arrive; the body is left
   * unread (for watch streams). Aborting `signal` later destroys the response.
   */
  async open(req: KubeRequest): Promise<http.IncomingMessage> {
    const { url, options, payload } = await this.prepare(req);
    const signal = req.signal;
    if (signal?.aborted) throw abortError(signal.reason);
    const mod = url.protocol === 'http:' ? http : https;
    try {
      return await this.send1(mod, url, options, payload, req);
    } catch (err) {
      // A kept-alive socket the server had already closed: the request never reached it, so it
      // is sent once more on a fresh connection (Node's documented pattern for reusedSocket).
      if (!(err instanceof StaleSocketError)) throw err;
      return this.send1(mod, url, options, payload, req);
    }
  }

  private send1(
    mod: typeof http | typeof https,
    url: URL,
    options: https.RequestOptions,
    payload: string | undefined,
    req: KubeRequest,
  ): Promise<http.IncomingMessage> {
    const signal = req.signal;
    return new Promise<http.IncomingMessage>((resolve, reject) => {
      const clientReq = mod.request(url, options);
      let settled = false;
      const onAbort = (): void => {
        clientReq.destroy(abortError(signal?.reason));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      const headerTimer = setTimeout(() => {
        const e = new Error(`no response headers within ${req.timeoutMs ?? this.timeoutMs} ms`);
        e.name = 'TimeoutError';
        clientReq.destroy(e);
      }, req.timeoutMs ?? this.timeoutMs);
      clientReq.on('response', (res) => {
        settled = true;
        clearTimeout(headerTimer);
        res.once('close', () => signal?.removeEventListener('abort', onAbort));
        resolve(res);
      });
      clientReq.on('error', (err: NodeJS.ErrnoException) => {
        clearTimeout(headerTimer);
        if (!settled) {
          settled = true;
          signal?.removeEventListener('abort', onAbort);
          const stale = clientReq.reusedSocket && err.code === 'ECONNRESET' && !signal?.aborted;
          reject(stale ? new StaleSocketError(err.message) : err);
        }
      });
      clientReq.end(payload);
    });
  }

  /** A complete exchange: resolves with any HTTP status; rejects on network errors/timeouts. */
  async request(req: KubeRequest): Promise<KubeResponse> {
    const timeout = AbortSignal.timeout(req.timeoutMs ?? this.timeoutMs);
    const signal = req.signal ? AbortSignal.any([req.signal, timeout]) : timeout;
    const res = await this.open({ ...req, signal });
    const chunks: Buffer[] = [];
    await new Promise<void>((resolve, reject) => {
      let ended = false;
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        ended = true;
        resolve();
      });
      res.on('error', reject);
      res.on('close', () => {
        if (!ended) reject(signal.aborted ? abortError(signal.reason) : new Error('response closed early'));
      });
    });
    return {
      status: res.statusCode ?? 0,
      headers: res.headers,
      body: Buffer.concat(chunks).toString('utf8'),
    };
  }

  /** Like `request`, but throws KubeApiError on a non-2xx status and parses the body with `schema`. */
  async json<S extends z.ZodType>(req: KubeRequest, schema: S): Promise<z.infer<S>> {
    const res = await this.request(req);
    if (res.status < 200 || res.status >= 300) {
      throw errorFromResponse(res.status, res.body, res.headers['retry-after']);
    }
    let decoded: unknown;
    try {
      decoded = JSON.parse(res.body);
    } catch {
      throw new Error(`invalid JSON from ${req.method ?? 'GET'} ${req.path}`);
    }
    return schema.parse(decoded);
  }

  /** Throws KubeApiError on a non-2xx status; ignores the body. */
  async send(req: KubeRequest): Promise<KubeResponse> {
    const res = await this.request(req);
    if (res.status < 200 || res.status >= 300) {
      throw errorFromResponse(res.status, res.body, res.headers['retry-after']);
    }
    return res;
  }
}

/** The request failed on a reused keep-alive socket before any answer. */
class StaleSocketError extends Error {
  override name = 'StaleSocketError';
}
