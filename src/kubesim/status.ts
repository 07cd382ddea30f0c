/** A resource as errors name it (schema.GroupResource): what a ResourceDef is to this module. */
export interface GroupResource {
  group: string;
  plural: string;
}

/**
 * Error bodies exactly as kube-apiserver writes them (metav1.Status). Clients such as client-go
 * and client-node branch on `reason` and `code`, so both must match the real server.
 */
export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

export interface StatusBody {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: { continue?: string };
  status: 'Failure' | 'Success';
  message?: string;
  reason?: string;
  details?: StatusDetails;
  code: number;
}

/** An API failure carrying the Status body (and extra headers such as Retry-After) to send. */
export class ApiError extends Error {
  override name = 'ApiError';
  constructor(
    readonly status: StatusBody,
    readonly headers: Record<string, string | string[]> = {},
  ) {
    super(status.message ?? status.reason ?? 'error');
  }
  get code(): number {
    return this.status.code;
  }
}

function failure(
  code: number,
  reason: string | undefined,
  message: string,
  details?: StatusDetails,
  headers?: Record<string, string>,
): ApiError {
  const body: StatusBody = {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    ...(reason ? { reason } : {}),
    ...(details ? { details } : {}),
    code,
  };
  return new ApiError(body, headers);
}

/** `services` for the core group, `leases.coordination.k8s.io` otherwise (schema.GroupResource.String()). */
export function qualifiedResource(def: GroupResource): string {
  return def.group ? `${def.plural}.${def.group}` : def.plural;
}

/** Details block as the real server fills it: group is omitted for the core group. */
function resourceDetails(def: GroupResource, name?: string): StatusDetails {
  return {
    ...(name !== undefined && name !== '' ? { name } : {}),
    ...(def.group ? { group: def.group } : {}),
    kind: def.plural,
  };
}

type ResRef = GroupResource;

export const errors = {
  notFound(def: ResRef, name: string): ApiError {
    return failure(
      404,
      'NotFound',
      `${qualifiedResource(def)} "${name}" not found`,
      resourceDetails(def, name),
    );
  },
  alreadyExists(def: ResRef, name: string): ApiError {
    return failure(
      409,
      'AlreadyExists',
      `${qualifiedResource(def)} "${name}" already exists`,
      resourceDetails(def, name),
    );
  },
  conflict(def: ResRef, name: string, why: string): ApiError {
    return failure(
      409,
      'Conflict',
      `Operation cannot be fulfilled on ${qualifiedResource(def)} "${name}": ${why}`,
      resourceDetails(def, name),
    );
  },
  /** 422 with field causes; `kindLabel` is the Kind (validation) or the plural (storage checks). */
  invalid(
    group: string,
    kindLabel: string,
    name: string,
    causes: StatusCause[],
    messages: string[],
  ): ApiError {
    const qualifiedKind = group ? `${kindLabel}.${group}` : kindLabel;
    const joined = messages.length === 1 ? (messages[0] ?? '') : `[${messages.join(', ')}]`;
    // Empty name and kind are left out of details (omitempty), as for ListOptions or the reviews.
    return failure(422, 'Invalid', `${qualifiedKind} "${name}" is invalid: ${joined}`, {
      ...(name ? { name } : {}),
      ...(group ? { group } : {}),
      ...(kindLabel ? { kind: kindLabel } : {}),
      causes,
    });
  },
  forbidden(def: ResRef, name: string | undefined, why: string, causes?: StatusCause[]): ApiError {
    const subject = name ? `${qualifiedResource(def)} "${name}"` : qualifiedResource(def);
    return failure(403, 'Forbidden', `${subject} is forbidden: ${why}`, {
      ...resourceDetails(def, name),
      ...(causes ? { causes } : {}),
    });
  },
  badRequest(message: string): ApiError {
    return failure(400, 'BadRequest', message);
  },
  /** A 422 that is not about fields (a JSON patch that cannot be applied). */
  unprocessable(message: string): ApiError {
    return failure(422, 'Invalid', message, {});
  },
  unauthorized(): ApiError {
    return failure(401, 'Unauthorized', 'Unauthorized');
  },
  pathNotFound(): ApiError {
    return failure(404, 'NotFound', 'the server could not find the requested resource', {});
  },
  methodNotAllowed(): ApiError {
    return failure(
      405,
      'MethodNotAllowed',
      'the server does not allow this method on the requested resource',
      {},
    );
  },
  unsupportedMediaType(contentType: string, accepted: string[]): ApiError {
    return failure(
      415,
      'UnsupportedMediaType',
      `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`,
      { causes: [{ reason: 'UnexpectedServerResponse', message: contentType }] },
    );
  },
  requestEntityTooLarge(): ApiError {
    return failure(413, 'RequestEntityTooLarge', 'Request entity too large: limit is 3145728');
  },
  /** 410 with reason Expired: a compacted resourceVersion or a stale continue token. */
  expired(message: string, continueToken?: string): ApiError {
    const err = failure(410, 'Expired', message);
    if (continueToken) err.status.metadata.continue = continueToken;
    return err;
  },
  tooLargeResourceVersion(requested: number, current: number): ApiError {
    return failure(504, 'Timeout', `Timeout: Too large resource version: ${requested}, current: ${current}`, {
      causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }],
      retryAfterSeconds: 1,
    });
  },
  tooManyRequests(retryAfterSeconds: number): ApiError {
    return failure(
      429,
      'TooManyRequests',
      'Too many requests, please try again later.',
      { retryAfterSeconds },
      { 'Retry-After': String(retryAfterSeconds) },
    );
  },
  /** A plain Go error turned into a Status (ErrorToAPIStatus): no reason, just the code and the text. */
  unclassified(code: number, message: string): ApiError {
    return failure(code, undefined, message);
  },
  internal(message: string): ApiError {
    return failure(500, 'InternalError', `Internal error occurred: ${message}`, {
      causes: [{ message }],
    });
  },
  serviceUnavailable(retryAfterSeconds?: number): ApiError {
    return failure(
      503,
      'ServiceUnavailable',
      'the server is currently unable to handle the request',
      retryAfterSeconds !== undefined ? { retryAfterSeconds } : undefined,
      retryAfterSeconds !== undefined ? { 'Retry-After': String(retryAfterSeconds) } : undefined,
    );
  },
};

/** The body a delete answers with for resources that do not return the deleted object. */
export function successStatus(def: ResRef, name: string, uid: string | undefined): Omit<StatusBody, 'code'> {
  // The real server leaves `code` out of a success Status (it is omitempty and never set there).
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Success',
    details: { ...resourceDetails(def, name), ...(uid ? { uid } : {}) },
  };
}
