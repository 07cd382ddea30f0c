import { ErrorBody } from '../schemas/common.js';

/** A failed management API call: the server's error body, or what we could salvage from a non-JSON one. */
export class ApiError extends Error {
  override name = 'ApiError';

  constructor(
    readonly status: number,
    readonly errorCode: string | undefined,
    readonly msg: string,
    readonly details: Readonly<Record<string, string>>,
    readonly operationId: string | undefined,
    /** Raw response body when it was not a JSON error body (a proxy's HTML page, say). */
    readonly rawBody?: string,
  ) {
    super(
      `HTTP ${status}: ${msg}${errorCode ? ` [${errorCode}]` : ''}${operationId ? ` (operation ${operationId})` : ''}`,
    );
  }

  /** Builds the error from any response; never throws, whatever the body is. */
  static fromResponse(
    status: number,
    headers: Record<string, string | string[] | undefined>,
    text: string,
  ): ApiError {
    const headerOp = headers['operation-id'];
    const opFromHeader = Array.isArray(headerOp) ? headerOp[0] : headerOp;
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    const parsed = ErrorBody.safeParse(json);
    if (parsed.success) {
      const b = parsed.data;
      return new ApiError(status, b.error_code, b.msg, b.details, b.details['operation_id'] ?? opFromHeader);
    }
    const snippet = text
      .replace(/<[^>]*>/g, ' ')
      .replace(/\s+/g, ' ')
      .trim()
      .slice(0, 200);
    return new ApiError(
      status,
      undefined,
      snippet || `HTTP ${status} with an empty body`,
      {},
      opFromHeader,
      text,
    );
  }
}

/** A response that arrived but did not match the contract (wrong shape, not JSON). */
export class ApiResponseError extends Error {
  override name = 'ApiResponseError';
  constructor(
    message: string,
    readonly status: number,
    readonly operationId: string | undefined,
  ) {
    super(message);
  }
}

/**
 * The server handed back a URL (a `next_page_uri`) on another origin than the client's base URL,
 * or with user information in it. Following it would send the API key there, so it is refused.
 */
export class ApiOriginError extends Error {
  override name = 'ApiOriginError';
  constructor(
    /** The refused URL, without any user information. */
    readonly url: string,
    readonly expectedOrigin: string,
  ) {
    super(
      `refusing to follow ${url}: it is not on the API's origin ${expectedOrigin}, and the API key is only ever sent there`,
    );
  }
}

/** No response arrived within the per-attempt timeout (retried for idempotent calls). */
export class ApiTimeoutError extends Error {
  override name = 'ApiTimeoutError';
}

function findApiError(err: unknown): ApiError | undefined {
  for (let e = err, depth = 0; e && depth < 10; depth++) {
    if (e instanceof ApiError) return e;
    e = e instanceof Error ? e.cause : undefined;
  }
  return undefined;
}

/** True for a 404, also when the ApiError is wrapped as another error's `cause`. */
export function isNotFound(err: unknown): boolean {
  return findApiError(err)?.status === 404;
}

export function hasErrorCode(err: unknown, ...codes: string[]): boolean {
  const code = findApiError(err)?.errorCode;
  return code !== undefined && codes.includes(code);
}
