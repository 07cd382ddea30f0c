import { EndpointsApi } from './resources/endpoints.js';
import { HttpsEdgeRoutesApi } from './resources/https-edge-routes.js';
import { HttpsEdgesApi } from './resources/https-edges.js';
import { IPPoliciesApi } from './resources/ip-policies.js';
import { KubernetesOperatorsApi } from './resources/kubernetes-operators.js';
import { TunnelsApi } from './resources/tunnels.js';
import { Transport, type TransportOptions } from './transport.js';

export {
  ApiError,
  ApiOriginError,
  ApiResponseError,
  ApiTimeoutError,
  isNotFound,
  hasErrorCode,
} from './errors.js';
export type { TransportOptions as ManagementClientOptions, CallOptions } from './transport.js';
export { ApiListingError, collect, type ListingOptions } from './paging.js';

/**
 * Typed client of the management API: one namespace per resource, lazy paging, retries for
 * idempotent calls, timeouts and cancellation. The API key is only ever put in the
 * Authorization header; it is never logged.
 */
export class ManagementClient {
  readonly transport: Transport;
  readonly ipPolicies: IPPoliciesApi;
  readonly tunnels: TunnelsApi;
  readonly httpsEdges: HttpsEdgesApi;
  readonly httpsEdgeRoutes: HttpsEdgeRoutesApi;
  readonly endpoints: EndpointsApi;
  readonly kubernetesOperators: KubernetesOperatorsApi;

  constructor(opts: TransportOptions) {
    this.transport = new Transport(opts);
    this.ipPolicies = new IPPoliciesApi(this.transport);
    this.tunnels = new TunnelsApi(this.transport);
    this.httpsEdges = new HttpsEdgesApi(this.transport);
    this.httpsEdgeRoutes = new HttpsEdgeRoutesApi(this.transport);
    this.endpoints = new EndpointsApi(this.transport);
    this.kubernetesOperators = new KubernetesOperatorsApi(this.transport, opts);
  }

  /** Releases pooled connections. */
  close(): Promise<void> {
    return this.transport.close();
  }
}
