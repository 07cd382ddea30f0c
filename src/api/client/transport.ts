import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, request, type Dispatcher } from 'undici';
import type { z } from 'zod';
import { silentLogger, type Logger } from '../../log/logger.js';
import { ApiError, ApiOriginError, ApiResponseError, ApiTimeoutError } from './errors.js';
import {
  DEFAULT_RETRY,
  isIdempotent,
  isRetryableStatus,
  parseRetryAfter,
  retryDelayMs,
  type RetryPolicy,
} from './retry.js';

export const SERVICE_VERSION = '2';
const USER_AGENT = 'endpoint-binder/0.1.0';

export interface TransportOptions {
  /** Base URL of the API, e.g. https://api.example.com or http://127.0.0.1:41234 */
  baseUrl: string;
  apiKey: string;
  /** Per-attempt timeout; default 30 s. */
  timeoutMs?: number;
  retry?: Partial<RetryPolicy>;
  logger?: Logger;
  dispatcher?: Dispatcher;
}

export interface CallOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
}

export interface RequestSpec<S extends z.ZodType | undefined> extends CallOptions {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** A path relative to the base URL, or an absolute URL (a `next_page_uri`) used exactly as given. */
  path: string;
  query?: Record<string, string | number | undefined>;
  body?: unknown;
  /** Schema of the success body; undefined for 204 responses. */
  schema: S;
}

type Headers = Record<string, string | string[] | undefined>;

function header(headers: Headers, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** Failures worth another try when the method is idempotent: resets, refusals, timeouts of the socket. */
function isNetworkError(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  return (
    typeof code === 'string' &&
    /^(ECONNRESET|ECONNREFUSED|EPIPE|ETIMEDOUT|EAI_AGAIN|UND_ERR_SOCKET|UND_ERR_CONNECT_TIMEOUT|UND_ERR_CLOSED)$/.test(
      code,
    )
  );
}

/**
 * The one place HTTP happens: headers, JSON, timeouts, cancellation, retries and error mapping.
 * Success bodies are parsed with the caller's zod schema (unknown fields tolerated).
 */
export class Transport {
  private readonly baseUrl: string;
  private readonly origin: string;
  private readonly retry: RetryPolicy;
  private readonly log: Logger;
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;

  constructor(private readonly opts: TransportOptions) {
    this.baseUrl = opts.baseUrl.replace(/\/+$/, '');
    this.origin = new URL(this.baseUrl).origin;
    this.retry = { ...DEFAULT_RETRY, ...opts.retry };
    this.log = opts.logger ?? silentLogger();
    this.ownsDispatcher = opts.dispatcher === undefined;
    this.dispatcher = opts.dispatcher ?? new Agent({ keepAliveTimeout: 10_000 });
  }

  /**
   * The absolute URL of a path, or of an absolute URL the server gave (a `next_page_uri`), which
   * must be on the base URL's origin (scheme, host and port) and carry no user information:
   * the Authorization header goes wherever this URL points.
   */
  url(path: string, query?: RequestSpec<undefined>['query']): string {
    const u = /^[a-z][a-z0-9+.-]*:/i.test(path) ? new URL(path) : new URL(this.baseUrl + path);
    // Checked for relative paths too: "@evil.example/x" appended to the base URL is a userinfo.
    if (u.origin !== this.origin || u.username !== '' || u.password !== '') {
      u.username = '';
      u.password = '';
      throw new ApiOriginError(u.toString(), this.origin);
    }
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) u.searchParams.set(k, String(v));
    return u.toString();
  }

  async call<S extends z.ZodType | undefined>(
    spec: RequestSpec<S>,
  ): Promise<S extends z.ZodType ? z.infer<S> : undefined> {
    const url = this.url(spec.path, spec.query);
    const retries = isIdempotent(spec.method) ? this.retry.retries : 0;
    for (let attempt = 0; ; attempt++) {
      spec.signal?.throwIfAborted();
      try {
        return await this.once(spec, url);
      } catch (err) {
        if (spec.signal?.aborted) throw err; // the caller cancelled: never retry that
        const retryAfter = err instanceof RetryableResponse ? err.retryAfterMs : undefined;
        const retryable =
          err instanceof RetryableResponse || err instanceof ApiTimeoutError || isNetworkError(err);
        const final = err instanceof RetryableResponse ? err.error : err;
        if (!retryable || attempt >= retries || (retryAfter ?? 0) > this.retry.maxRetryAfterMs) throw final;
        const delay = retryDelayMs(this.retry, attempt + 1, retryAfter);
        this.log.debug(
          { method: spec.method, url, attempt: attempt + 1, delay_ms: delay, err: String(final) },
          'api request retry',
        );
        await sleep(delay, undefined, spec.signal ? { signal: spec.signal } : undefined);
      }
    }
  }

  private async once<S extends z.ZodType | undefined>(
    spec: RequestSpec<S>,
    url: string,
  ): Promise<S extends z.ZodType ? z.infer<S> : undefined> {
    const timeout = AbortSignal.timeout(spec.timeoutMs ?? this.opts.timeoutMs ?? 30_000);
    const signal = spec.signal ? AbortSignal.any([spec.signal, timeout]) : timeout;
    const hasBody = spec.body !== undefined;
    try {
      return await this.send(spec, url, signal, hasBody);
    } catch (err) {
      if (timeout.aborted && !spec.signal?.aborted) {
        throw new ApiTimeoutError(
          `${spec.method} ${url}: no response within ${spec.timeoutMs ?? this.opts.timeoutMs ?? 30_000} ms`,
        );
      }
      throw err;
    }
  }

  private async send<S extends z.ZodType | undefined>(
    spec: RequestSpec<S>,
    url: string,
    signal: AbortSignal,
    hasBody: boolean,
  ): Promise<S extends z.ZodType ? z.infer<S> : undefined> {
    const res = await request(url, {
      method: spec.method,
      dispatcher: this.dispatcher,
      signal,
      headers: {
        authorization: `Bearer ${this.opts.apiKey}`,
        'service-version': SERVICE_VERSION,
        'user-agent': USER_AGENT,
        accept: 'application/json',
        ...(hasBody ? { 'content-type': 'application/json' } : {}),
      },
      ...(hasBody ? { body: JSON.stringify(spec.body) } : {}),
    });
    const text = await res.body.text();
    const headers = res.headers;
    const operationId = header(headers, 'operation-id');
    this.log.debug(
      { method: spec.method, url, status: res.statusCode, operation_id: operationId },
      'api request',
    );
    if (res.statusCode >= 400) {
      const error = ApiError.fromResponse(res.statusCode, headers, text);
      if (isRetryableStatus(res.statusCode)) {
        throw new RetryableResponse(error, parseRetryAfter(header(headers, 'retry-after')));
      }
      throw error;
    }
    if (spec.schema === undefined) return undefined as S extends z.ZodType ? z.infer<S> : undefined;
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new ApiResponseError(`${spec.method} ${url}: response is not JSON`, res.statusCode, operationId);
    }
    const parsed = spec.schema.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new ApiResponseError(
        `${spec.method} ${url}: response does not match the contract at ${issue?.path.join('.') || '(root)'}: ${issue?.message ?? ''}`,
        res.statusCode,
        operationId,
      );
    }
    return parsed.data as S extends z.ZodType ? z.infer<S> : undefined;
  }

  async close(): Promise<void> {
    if (this.ownsDispatcher) await this.dispatcher.close();
  }
}

/** Internal: a retryable status, carrying the error to throw when retries run out. */
class RetryableResponse extends Error {
  constructor(
    readonly error: ApiError,
    readonly retryAfterMs: number | undefined,
  ) {
    super(error.message);
  }
}
