import type { ObjectReference } from '../objects.js';

/** Pure parts of the event recorder: validation, the aggregation key, and the dedup cache. */

export type EventType = 'Normal' | 'Warning';

export interface EventInput {
  involvedObject: ObjectReference & { kind: string; name: string };
  type: EventType;
  reason: string;
  message: string;
}

/** client-go requires CamelCase reasons ("ServiceCreated", "NameConflict"). */
export function isValidReason(reason: string): boolean {
  return /^[A-Z][A-Za-z0-9]{0,127}$/.test(reason);
}

/** Events longer than this are truncated (the events.k8s.io note limit is 1 kB). */
const MAX_MESSAGE_LENGTH = 1024;

export function truncateMessage(message: string): string {
  return message.length <= MAX_MESSAGE_LENGTH ? message : `${message.slice(0, MAX_MESSAGE_LENGTH - 3)}...`;
}

/** Same key ⇒ same Event object (its count is bumped instead of creating a new one). */
export function aggregationKey(e: EventInput, component: string): string {
  const o = e.involvedObject;
  return JSON.stringify([
    component,
    o.apiVersion ?? '',
    o.kind,
    o.namespace ?? '',
    o.name,
    o.uid ?? '',
    e.type,
    e.reason,
    e.message,
  ]);
}

/** Where Events about an object go: its namespace, or `default` for cluster-scoped objects. */
export function eventNamespace(o: ObjectReference): string {
  return o.namespace || 'default';
}

/**
 * client-go names events `<object>.<unix nanos in hex>`; the object part is cut so the name stays
 * a valid (≤ 253 chars) object name.
 */
export function eventName(objectName: string, nowMs: number, random: number): string {
  const nanos = BigInt(Math.floor(nowMs)) * 1_000_000n + BigInt(Math.floor(random * 1_000_000));
  const suffix = nanos.toString(16);
  return `${objectName.slice(0, 253 - suffix.length - 1)}.${suffix}`;
}

/** RFC 3339 seconds, the format of core/v1 Event timestamps. */
export function eventTimestamp(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export interface AggregateEntry {
  namespace: string;
  name: string;
  count: number;
  firstTimestamp: string;
  lastSeenAt: number;
}

/**
 * A bounded LRU of recently written Events, by aggregation key. An entry is only reused within
 * `windowMs` of its last occurrence; older repeats start a new Event.
 */
export class AggregationCache {
  private readonly entries = new Map<string, AggregateEntry>();

  constructor(
    private readonly windowMs: number,
    private readonly maxEntries: number,
  ) {}

  lookup(key: string, now: number): AggregateEntry | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    if (now - e.lastSeenAt > this.windowMs) {
      this.entries.delete(key);
      return undefined;
    }
    // Refresh LRU position.
    this.entries.delete(key);
    this.entries.set(key, e);
    return e;
  }

  remember(key: string, entry: AggregateEntry): void {
    this.entries.delete(key);
    this.entries.set(key, entry);
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (oldest.done) break;
      this.entries.delete(oldest.value);
    }
  }

  forget(key: string): void {
    this.entries.delete(key);
  }

  get size(): number {
    return this.entries.size;
  }
}
