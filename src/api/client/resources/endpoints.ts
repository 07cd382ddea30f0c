import type { z } from 'zod';
import { Endpoint, type EndpointCreate, type EndpointUpdate } from '../../schemas/endpoint.js';
import type { PageOptions } from '../../schemas/common.js';
import { ApiError } from '../errors.js';
import { items } from '../paging.js';
import type { CallOptions, Transport } from '../transport.js';

export interface EndpointListOptions extends PageOptions, CallOptions {
  /** The only filter the API accepts: `"kubernetes" in obj.bindings`. */
  filter?: string;
}

/** What `GET /endpoints/{id}` proved. */
export type EndpointLookup =
  { found: true; endpoint: Endpoint } | { found: false; errorCode: string; operationId: string | undefined };

/** The API's code for "the resource does not exist in this account" (src/api/error-codes). */
export const NOT_FOUND_CODE = 'ERR_150';

/** True only for the API's own not-found answer: status 404, a JSON error body (parsed by the schema), code ERR_150. */
export function isNotFoundProof(err: ApiError): boolean {
  return err.status === 404 && err.rawBody === undefined && err.errorCode === NOT_FOUND_CODE;
}

/** Cluster-bound endpoints (`/endpoints`). */
export class EndpointsApi {
  constructor(private readonly t: Transport) {}

  create(input: z.input<typeof EndpointCreate>, o: CallOptions = {}): Promise<Endpoint> {
    return this.t.call({ method: 'POST', path: '/endpoints', body: input, schema: Endpoint, ...o });
  }

  get(id: string, o: CallOptions = {}): Promise<Endpoint> {
    return this.t.call({
      method: 'GET',
      path: `/endpoints/${encodeURIComponent(id)}`,
      schema: Endpoint,
      ...o,
    });
  }

  /**
   * The endpoint, or proof that it does not exist: the API's own not-found error (404 with its
   * JSON error body, code `ERR_150`). Anything else (a bare 404, an HTML page from something in
   * between, a 5xx, a timeout) proves nothing and is thrown.
   */
  async lookup(id: string, o: CallOptions = {}): Promise<EndpointLookup> {
    try {
      return { found: true, endpoint: await this.get(id, o) };
    } catch (err) {
      if (err instanceof ApiError && isNotFoundProof(err))
        return { found: false, errorCode: err.errorCode!, operationId: err.operationId };
      throw err;
    }
  }

  /** Lazily lists every endpoint of the account, newest first. */
  list(o: EndpointListOptions = {}): AsyncGenerator<Endpoint> {
    const { filter, ...rest } = o;
    return items(this.t, '/endpoints', 'endpoints', Endpoint, {
      ...rest,
      ...(filter !== undefined ? { query: { filter } } : {}),
    });
  }

  update(id: string, input: z.input<typeof EndpointUpdate>, o: CallOptions = {}): Promise<Endpoint> {
    return this.t.call({
      method: 'PATCH',
      path: `/endpoints/${encodeURIComponent(id)}`,
      body: input,
      schema: Endpoint,
      ...o,
    });
  }

  delete(id: string, o: CallOptions = {}): Promise<undefined> {
    return this.t.call({
      method: 'DELETE',
      path: `/endpoints/${encodeURIComponent(id)}`,
      schema: undefined,
      ...o,
    });
  }
}
