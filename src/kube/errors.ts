import { ApiException } from '@kubernetes/client-node';
import { StatusSchema, type Status } from './objects.js';

export interface StatusCause {
  type?: string | undefined;
  message?: string | undefined;
  field?: string | undefined;
}

/** A Kubernetes API error: the HTTP status plus the parsed `Status` body, when there was one. */
export class KubeApiError extends Error {
  override readonly name = 'KubeApiError';
  /** HTTP status code (or the Status `code` of an in-stream watch ERROR event). */
  readonly code: number;
  /** Status `reason`: NotFound, AlreadyExists, Conflict, Expired, Gone, TooManyRequests, ... */
  readonly reason: string;
  readonly causes: StatusCause[];
  /** From the `Retry-After` header or `details.retryAfterSeconds`. */
  readonly retryAfterSeconds: number | undefined;

  constructor(init: {
    code: number;
    reason?: string | undefined;
    message?: string | undefined;
    causes?: StatusCause[] | undefined;
    retryAfterSeconds?: number | undefined;
  }) {
    super(init.message || `Kubernetes API error ${init.code}`);
    this.code = init.code;
    this.reason = init.reason || reasonForCode(init.code);
    this.causes = init.causes ?? [];
    this.retryAfterSeconds = init.retryAfterSeconds;
  }
}

function reasonForCode(code: number): string {
  switch (code) {
    case 400:
      return 'BadRequest';
    case 401:
      return 'Unauthorized';
    case 403:
      return 'Forbidden';
    case 404:
      return 'NotFound';
    case 405:
      return 'MethodNotAllowed';
    case 409:
      return 'Conflict';
    case 410:
      return 'Gone';
    case 415:
      return 'UnsupportedMediaType';
    case 422:
      return 'Invalid';
    case 429:
      return 'TooManyRequests';
    case 500:
      return 'InternalError';
    case 503:
      return 'ServiceUnavailable';
    case 504:
      return 'Timeout';
    default:
      return 'Unknown';
  }
}

/** Parses a Retry-After header value (seconds form only; HTTP dates are rare from kube). */
export function parseRetryAfter(value: string | string[] | undefined): number | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (v === undefined) return undefined;
  const n = Number(v.trim());
  return Number.isFinite(n) && n >= 0 ? n : undefined;
}

/** Builds a KubeApiError from a `Status` object (already decoded JSON). */
export function errorFromStatus(
  status: Status,
  httpCode?: number,
  retryAfterHeader?: string | string[],
): KubeApiError {
  return new KubeApiError({
    code: status.code ?? httpCode ?? 0,
    reason: status.reason,
    message: status.message,
    causes: status.details?.causes,
    retryAfterSeconds: parseRetryAfter(retryAfterHeader) ?? status.details?.retryAfterSeconds,
  });
}

/** Builds a KubeApiError from an HTTP status and the raw body text (which may not be JSON). */
export function errorFromResponse(
  httpCode: number,
  bodyText: string | undefined,
  retryAfterHeader?: string | string[],
): KubeApiError {
  let decoded: unknown;
  try {
    decoded = bodyText ? JSON.parse(bodyText) : undefined;
  } catch {
    decoded = undefined;
  }
  const parsed = StatusSchema.safeParse(decoded);
  if (parsed.success && decoded !== undefined) {
    // The HTTP status wins over a missing/odd code in the body.
    return errorFromStatus(
      { ...parsed.data, code: parsed.data.code ?? httpCode },
      httpCode,
      retryAfterHeader,
    );
  }
  return new KubeApiError({
    code: httpCode,
    message: bodyText?.trim() ? bodyText.trim().slice(0, 500) : undefined,
    retryAfterSeconds: parseRetryAfter(retryAfterHeader),
  });
}

/**
 * Normalises anything thrown by our transport or by client-node's generated clients into a
 * KubeApiError, or returns undefined for non-HTTP failures (network errors, aborts).
 */
export function toKubeApiError(err: unknown): KubeApiError | undefined {
  if (err instanceof KubeApiError) return err;
  if (err instanceof ApiException) {
    const e = err as ApiException<unknown>;
    const body =
      typeof e.body === 'string' ? e.body : e.body === undefined ? undefined : JSON.stringify(e.body);
    return errorFromResponse(e.code, body, e.headers['retry-after']);
  }
  return undefined;
}

export const isNotFound = (err: unknown): boolean => toKubeApiError(err)?.code === 404;
export const isGone = (err: unknown): boolean => toKubeApiError(err)?.code === 410;
export const isConflict = (err: unknown): boolean => {
  const e = toKubeApiError(err);
  return e?.code === 409 && e.reason !== 'AlreadyExists';
};
export const isAlreadyExists = (err: unknown): boolean => {
  const e = toKubeApiError(err);
  return e?.code === 409 && e.reason === 'AlreadyExists';
};

export type ErrorKind =
  | 'gone'
  | 'throttled'
  | 'server'
  | 'auth'
  | 'conflict'
  | 'not_found'
  | 'client'
  | 'timeout'
  | 'network'
  | 'aborted'
  | 'other';

/** A small, stable label for logs and metrics. */
export function classifyError(err: unknown): ErrorKind {
  const api = toKubeApiError(err);
  if (api) {
    const c = api.code;
    if (c === 410) return 'gone';
    if (c === 429) return 'throttled';
    if (c === 401 || c === 403) return 'auth';
    if (c === 409) return 'conflict';
    if (c === 404) return 'not_found';
    if (c >= 500) return 'server';
    if (c >= 400) return 'client';
    return 'other';
  }
  if (err instanceof Error) {
    if (err.name === 'AbortError') return 'aborted';
    if (err.name === 'TimeoutError') return 'timeout';
    const code = (err as NodeJS.ErrnoException).code;
    if (typeof code === 'string' && /^(E[A-Z]+|UND_ERR_[A-Z_]+|ERR_STREAM_PREMATURE_CLOSE)$/.test(code)) {
      return code === 'ETIMEDOUT' ? 'timeout' : 'network';
    }
  }
  return 'other';
}

/** Short description for logs. */
export function describeError(err: unknown): {
  errorKind: ErrorKind;
  code?: number;
  reason?: string;
  err: string;
} {
  const api = toKubeApiError(err);
  const kind = classifyError(err);
  if (api) return { errorKind: kind, code: api.code, reason: api.reason, err: api.message };
  return { errorKind: kind, err: err instanceof Error ? err.message : String(err) };
}
