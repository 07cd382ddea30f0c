import type { z } from 'zod';
import { Endpoint, type EndpointCreate, type EndpointUpdate } from '../../schemas/endpoint.js';
import type { PageOptions } from '../../schemas/common.js';
import { items } from '../paging.js';
import type { CallOptions, Transport } from '../transport.js';

export interface EndpointListOptions extends PageOptions, CallOptions {
  /** The only filter the API accepts: `"kubernetes" in obj.bindings`. */
  filter?: string;
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
