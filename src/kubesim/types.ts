/**
 * The JSON shapes kubesim stores and serves. Objects are kept as plain JSON (the wire form) so
 * that what a client sent, what is stored and what a watch replays are the same bytes; typed
 * views for a resource's own rules are produced by that resource's zod schema.
 */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export interface ObjectMeta {
  name: string;
  namespace?: string | undefined;
  generateName?: string | undefined;
  uid?: string | undefined;
  resourceVersion?: string | undefined;
  generation?: number | undefined;
  creationTimestamp?: string | undefined;
  deletionTimestamp?: string | undefined;
  labels?: Record<string, string> | undefined;
  annotations?: Record<string, string> | undefined;
  [key: string]: unknown;
}

/** A stored object: always carries kind/apiVersion and a named metadata block. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  [key: string]: unknown;
}

export type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

/** Deep copy so stored state never aliases what a handler or a client-side test mutates. */
export function clone<T>(value: T): T {
  return structuredClone(value);
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Go decodes JSON null as "unset"; dropping nulls up front gives the same result. */
export function stripNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(stripNulls);
  if (!isRecord(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) if (v !== null) out[k] = stripNulls(v);
  return out;
}
