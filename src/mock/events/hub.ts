import type { ServerResponse } from 'node:http';
import type { StoredEndpoint } from '../resources/stored-endpoint.js';
import type { MockServices } from '../services.js';
import { AccountEventLog, type EndpointEvent, type EndpointEventType } from './log.js';

/** Name of the `services.bus` event every endpoint change is fanned out on; the payload is an EndpointEvent. */
export const ENDPOINT_EVENT = 'endpoint.event';

/** One open event stream of an operator. */
export interface OpenStream {
  operatorId: string;
  res: ServerResponse;
  /** Ends the response and releases the stream's listener and timers; idempotent. */
  close(): void;
}

/**
 * The mock's notification service: a per-account event log (for resuming), the fan-out of new
 * events over `services.bus`, and the registry of open streams per operator (for the cap, for
 * closing an operator's streams when it is deleted, and for closing all of them on shutdown).
 */
export class OperatorEventHub {
  private readonly logs = new Map<string, AccountEventLog>();
  private readonly streams = new Map<string, Set<OpenStream>>();
  private readonly firstId: number;

  constructor(private readonly services: MockServices) {
    services.onShutdown(async () => this.closeAll());
    this.firstId = services.config.events.first_id ?? services.startedAt * 1000;
  }

  log(accountId: string): AccountEventLog {
    let log = this.logs.get(accountId);
    if (!log) {
      log = new AccountEventLog(accountId, this.services.config.events.retention, this.firstId);
      this.logs.set(accountId, log);
    }
    return log;
  }

  /** Logs an endpoint change and fans it out to every open stream of the account. */
  record(accountId: string, type: EndpointEventType, endpoint: StoredEndpoint): EndpointEvent {
    const event = this.log(accountId).append(type, endpoint, this.services.timestamp());
    this.services.bus.emit(ENDPOINT_EVENT, event);
    return event;
  }

  streamCount(operatorId: string): number {
    return this.streams.get(operatorId)?.size ?? 0;
  }

  /** The operator's open streams (tests use it to drop a connection from the server side). */
  openStreams(operatorId: string): OpenStream[] {
    return [...(this.streams.get(operatorId) ?? [])];
  }

  add(stream: OpenStream): void {
    let set = this.streams.get(stream.operatorId);
    if (!set) {
      set = new Set();
      this.streams.set(stream.operatorId, set);
    }
    set.add(stream);
  }

  remove(stream: OpenStream): void {
    const set = this.streams.get(stream.operatorId);
    set?.delete(stream);
    if (set?.size === 0) this.streams.delete(stream.operatorId);
  }

  /** Ends every stream of one operator (it was deleted). */
  closeOperator(operatorId: string): void {
    for (const s of [...(this.streams.get(operatorId) ?? [])]) s.close();
  }

  closeAll(): void {
    for (const set of [...this.streams.values()]) for (const s of [...set]) s.close();
  }
}

const hubs = new WeakMap<MockServices, OperatorEventHub>();

/** The notification hub of one mock server, created on first use. */
export function operatorEventHub(services: MockServices): OperatorEventHub {
  let hub = hubs.get(services);
  if (!hub) {
    hub = new OperatorEventHub(services);
    hubs.set(services, hub);
  }
  return hub;
}
