import type { z } from 'zod';
import { Endpoint } from '../../schemas/endpoint.js';
import {
  EndpointChangedData,
  EndpointDeletedData,
  KubernetesOperator,
  ResyncData,
  type KubernetesOperatorCreate,
  type KubernetesOperatorUpdate,
  type OperatorEvent,
} from '../../schemas/operator.js';
import type { PageOptions } from '../../schemas/common.js';
import { silentLogger, type Logger } from '../../../log/logger.js';
import { items, type ListingOptions } from '../paging.js';
import type { SseMessage } from '../sse/parser.js';
import { watchSse, type SseWatchOptions } from '../sse/watch.js';
import type { CallOptions, Transport, TransportOptions } from '../transport.js';

export type WatchEventsOptions = SseWatchOptions;

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * Maps one SSE message to a typed notification. Unknown event names are skipped (undefined), so
 * the server may add kinds; an unreadable payload of a known kind becomes a `resync`, because
 * the caller's view can no longer be trusted and relisting repairs it.
 */
export function toOperatorEvent(msg: SseMessage, log: Logger = silentLogger()): OperatorEvent | undefined {
  const data = parseJson(msg.data);
  const invalid = (why: string): OperatorEvent => {
    log.warn({ event: msg.event, id: msg.id, why }, 'unreadable operator event; resyncing');
    return { type: 'resync', id: msg.id, reason: 'invalid_event' };
  };
  switch (msg.event) {
    case 'endpoint.created':
    case 'endpoint.updated': {
      const r = EndpointChangedData.safeParse(data);
      return r.success
        ? { type: msg.event, id: msg.id, endpoint: r.data.endpoint }
        : invalid(r.error.message);
    }
    case 'endpoint.deleted': {
      const r = EndpointDeletedData.safeParse(data);
      return r.success
        ? { type: msg.event, id: msg.id, endpoint: r.data.endpoint }
        : invalid(r.error.message);
    }
    case 'ready':
      return { type: 'ready', id: msg.id };
    case 'resync': {
      const r = ResyncData.safeParse(data);
      return { type: 'resync', id: msg.id, reason: r.success ? r.data.reason : 'unknown' };
    }
    default:
      return undefined;
  }
}

/** Kubernetes operator registrations (`/kubernetes_operators`), their bound endpoints and notifications. */
export class KubernetesOperatorsApi {
  constructor(
    private readonly t: Transport,
    private readonly opts: TransportOptions,
  ) {}

  private path(id: string): string {
    return `/kubernetes_operators/${encodeURIComponent(id)}`;
  }

  create(input: z.input<typeof KubernetesOperatorCreate>, o: CallOptions = {}): Promise<KubernetesOperator> {
    return this.t.call({
      method: 'POST',
      path: '/kubernetes_operators',
      body: input,
      schema: KubernetesOperator,
      ...o,
    });
  }

  get(id: string, o: CallOptions = {}): Promise<KubernetesOperator> {
    return this.t.call({ method: 'GET', path: this.path(id), schema: KubernetesOperator, ...o });
  }

  /** Lazily lists the account's operators, newest first. */
  list(o: PageOptions & CallOptions = {}): AsyncGenerator<KubernetesOperator> {
    return items(this.t, '/kubernetes_operators', 'operators', KubernetesOperator, o);
  }

  update(
    id: string,
    input: z.input<typeof KubernetesOperatorUpdate>,
    o: CallOptions = {},
  ): Promise<KubernetesOperator> {
    return this.t.call({
      method: 'PATCH',
      path: this.path(id),
      body: input,
      schema: KubernetesOperator,
      ...o,
    });
  }

  delete(id: string, o: CallOptions = {}): Promise<undefined> {
    return this.t.call({ method: 'DELETE', path: this.path(id), schema: undefined, ...o });
  }

  /**
   * Lazily lists every cluster-bound endpoint of the account, newest first. The end of the
   * listing is proven (`proveEnd`, pages of 100 unless `limit` says otherwise): the controller
   * deletes what a complete listing lacks, so a truncated one must fail instead.
   */
  boundEndpoints(id: string, o: PageOptions & CallOptions & ListingOptions = {}): AsyncGenerator<Endpoint> {
    return items(this.t, `${this.path(id)}/bound_endpoints`, 'endpoints', Endpoint, {
      limit: 100,
      proveEnd: true,
      ...o,
    });
  }

  /**
   * Follows the operator's notifications until `signal` aborts: endpoint changes, `ready` when
   * the stream is live, and `resync` when the caller must relist. Reconnects by itself after
   * drops and resumes from the last id seen, so no event is missed or repeated across a
   * reconnect as long as the server still has it (otherwise it says `resync`).
   */
  async *watchEvents(id: string, o: WatchEventsOptions = {}): AsyncGenerator<OperatorEvent> {
    const log = this.opts.logger ?? silentLogger();
    const stream = watchSse(
      {
        url: this.t.url(`${this.path(id)}/events`),
        apiKey: this.opts.apiKey,
        ...(this.opts.dispatcher ? { dispatcher: this.opts.dispatcher } : {}),
        logger: log,
      },
      o,
    );
    for await (const msg of stream) {
      const event = toOperatorEvent(msg, log);
      if (event) yield event;
    }
  }
}
