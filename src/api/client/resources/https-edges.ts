import { HTTPSEdge, type HTTPSEdgeCreate, type HTTPSEdgeUpdate } from '../../schemas/edge.js';
import type { PageOptions } from '../../schemas/common.js';
import {
  EDGE_MODULES,
  type EdgeModuleInput,
  type EdgeModuleName,
  type EdgeModuleOutput,
} from '../../schemas/modules/index.js';
import { items } from '../paging.js';
import type { CallOptions, Transport } from '../transport.js';

const edgePath = (id: string) => `/edges/https/${encodeURIComponent(id)}`;

/** One edge module (`mutual_tls` or `tls_termination`): replace (PUT), get, delete. */
export class EdgeModuleApi<N extends EdgeModuleName> {
  constructor(
    private readonly t: Transport,
    readonly name: N,
  ) {}

  /** Replaces the module wholesale with the bare module object and answers the stored module. */
  replace(edgeId: string, body: EdgeModuleInput<N>, o: CallOptions = {}): Promise<EdgeModuleOutput<N>> {
    return this.t.call({
      method: 'PUT',
      path: `${edgePath(edgeId)}/${this.name}`,
      body,
      schema: EDGE_MODULES[this.name].output,
      ...o,
    }) as Promise<EdgeModuleOutput<N>>;
  }

  /** The module; a 404 ApiError when it is not configured. */
  get(edgeId: string, o: CallOptions = {}): Promise<EdgeModuleOutput<N>> {
    return this.t.call({
      method: 'GET',
      path: `${edgePath(edgeId)}/${this.name}`,
      schema: EDGE_MODULES[this.name].output,
      ...o,
    }) as Promise<EdgeModuleOutput<N>>;
  }

  delete(edgeId: string, o: CallOptions = {}): Promise<undefined> {
    return this.t.call({
      method: 'DELETE',
      path: `${edgePath(edgeId)}/${this.name}`,
      schema: undefined,
      ...o,
    });
  }
}

export class HttpsEdgesApi {
  readonly mutualTls: EdgeModuleApi<'mutual_tls'>;
  readonly tlsTermination: EdgeModuleApi<'tls_termination'>;

  constructor(private readonly t: Transport) {
    this.mutualTls = new EdgeModuleApi(t, 'mutual_tls');
    this.tlsTermination = new EdgeModuleApi(t, 'tls_termination');
  }

  create(input: HTTPSEdgeCreate = {}, o: CallOptions = {}): Promise<HTTPSEdge> {
    return this.t.call({ method: 'POST', path: '/edges/https', body: input, schema: HTTPSEdge, ...o });
  }

  get(id: string, o: CallOptions = {}): Promise<HTTPSEdge> {
    return this.t.call({ method: 'GET', path: edgePath(id), schema: HTTPSEdge, ...o });
  }

  /** Lazily lists every HTTPS edge of the account, newest first; requests go out as items are read. */
  list(o: PageOptions & CallOptions = {}): AsyncGenerator<HTTPSEdge> {
    return items(this.t, '/edges/https', 'https_edges', HTTPSEdge, o);
  }

  /** Partial update: omitted fields stay; a given hostports list or module replaces the stored one. */
  update(id: string, input: HTTPSEdgeUpdate, o: CallOptions = {}): Promise<HTTPSEdge> {
    return this.t.call({ method: 'PATCH', path: edgePath(id), body: input, schema: HTTPSEdge, ...o });
  }

  delete(id: string, o: CallOptions = {}): Promise<undefined> {
    return this.t.call({ method: 'DELETE', path: edgePath(id), schema: undefined, ...o });
  }
}
