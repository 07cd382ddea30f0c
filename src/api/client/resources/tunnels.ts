import type { PageOptions } from '../../schemas/common.js';
import { Tunnel } from '../../schemas/tunnel.js';
import { items } from '../paging.js';
import type { CallOptions, Transport } from '../transport.js';

export class TunnelsApi {
  constructor(private readonly t: Transport) {}

  /** Lazily lists the account's online tunnels, newest first. */
  list(o: PageOptions & CallOptions = {}): AsyncGenerator<Tunnel> {
    return items(this.t, '/tunnels', 'tunnels', Tunnel, o);
  }
}
