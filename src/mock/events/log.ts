import type { StoredEndpoint } from '../resources/stored-endpoint.js';

export const ENDPOINT_EVENT_TYPES = ['endpoint.created', 'endpoint.updated', 'endpoint.deleted'] as const;
export type EndpointEventType = (typeof ENDPOINT_EVENT_TYPES)[number];

/** One change of one endpoint, as logged for replay: a snapshot of the record after the change. */
export interface EndpointEvent {
  /** Per account, starting at the log's first id, increasing by 1 with every change. */
  id: number;
  accountId: string;
  type: EndpointEventType;
  endpoint: StoredEndpoint;
  at: string;
}

/**
 * An account's recent endpoint changes, kept so a stream can resume with `Last-Event-ID`.
 * Only the newest `retention` events are kept; ids are never reused within a server's life.
 */
export class AccountEventLog {
  private readonly events: EndpointEvent[] = [];
  private head: number;

  constructor(
    readonly accountId: string,
    private readonly retention: number,
    firstId = 1,
  ) {
    this.head = firstId - 1;
  }

  /** Id of the newest event; first id − 1 when nothing happened yet. */
  get lastId(): number {
    return this.head;
  }

  append(type: EndpointEventType, endpoint: StoredEndpoint, at: string): EndpointEvent {
    const event: EndpointEvent = {
      id: ++this.head,
      accountId: this.accountId,
      type,
      endpoint: { ...endpoint, bindings: [...endpoint.bindings] },
      at,
    };
    this.events.push(event);
    if (this.events.length > this.retention) this.events.splice(0, this.events.length - this.retention);
    return event;
  }

  /**
   * The events after `afterId`, oldest first; undefined when they cannot all be replayed: the id
   * is older than the log keeps, or newer than any event (a client of an earlier server).
   */
  since(afterId: number): EndpointEvent[] | undefined {
    if (!Number.isSafeInteger(afterId) || afterId < 0 || afterId > this.head) return undefined;
    const oldest = this.events[0]?.id ?? this.head + 1;
    if (afterId < oldest - 1) return undefined;
    return this.events.filter((e) => e.id > afterId);
  }
}
