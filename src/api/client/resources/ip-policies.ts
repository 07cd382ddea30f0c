import type { z } from 'zod';
import { IPPolicy, type IPPolicyCreate, type IPPolicyUpdate } from '../../schemas/ip-policy.js';
import type { PageOptions } from '../../schemas/common.js';
import { items } from '../paging.js';
import type { CallOptions, Transport } from '../transport.js';

export class IPPoliciesApi {
  constructor(private readonly t: Transport) {}

  create(input: z.input<typeof IPPolicyCreate> = {}, o: CallOptions = {}): Promise<IPPolicy> {
    return this.t.call({ method: 'POST', path: '/ip_policies', body: input, schema: IPPolicy, ...o });
  }

  get(id: string, o: CallOptions = {}): Promise<IPPolicy> {
    return this.t.call({
      method: 'GET',
      path: `/ip_policies/${encodeURIComponent(id)}`,
      schema: IPPolicy,
      ...o,
    });
  }

  /** Lazily lists every policy of the account, newest first. */
  list(o: PageOptions & CallOptions = {}): AsyncGenerator<IPPolicy> {
    return items(this.t, '/ip_policies', 'ip_policies', IPPolicy, o);
  }

  update(id: string, input: z.input<typeof IPPolicyUpdate>, o: CallOptions = {}): Promise<IPPolicy> {
    return this.t.call({
      method: 'PATCH',
      path: `/ip_policies/${encodeURIComponent(id)}`,
      body: input,
      schema: IPPolicy,
      ...o,
    });
  }

  delete(id: string, o: CallOptions = {}): Promise<undefined> {
    return this.t.call({
      method: 'DELETE',
      path: `/ip_policies/${encodeURIComponent(id)}`,
      schema: undefined,
      ...o,
    });
  }
}
