import { IPPoliciesApi } from './resources/ip-policies.js';
import { TunnelsApi } from './resources/tunnels.js';
import { Transport, type TransportOptions } from './transport.js';

export { ApiError, ApiResponseError, ApiTimeoutError, isNotFound, hasErrorCode } from './errors.js';
export type { TransportOptions as ManagementClientOptions, CallOptions } from './transport.js';
export { collect } from './paging.js';

/**
 * Typed client of the management API: one namespace per resource, lazy paging, retries for
 * idempotent calls, timeouts and cancellation. The API key is only ever put in the
 * Authorization header; it is never logged.
 */
export class ManagementClient {
  readonly transport: Transport;
  readonly ipPolicies: IPPoliciesApi;
  readonly tunnels: TunnelsApi;

  constructor(opts: TransportOptions) {
    this.transport = new Transport(opts);
    this.ipPolicies = new IPPoliciesApi(this.transport);
    this.tunnels = new TunnelsApi(this.transport);
  }

  /** Releases pooled connections. */
  close(): Promise<void> {
    return this.transport.close();
  }
}
