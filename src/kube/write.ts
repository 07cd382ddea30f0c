import { isDeepStrictEqual } from 'node:util';
import type { KubeConfig } from '@kubernetes/client-node';
import { PatchStrategy } from '@kubernetes/client-node';
import type { z } from 'zod';
import { isAlreadyExists, isConflict, isNotFound } from './errors.js';
import { StatusSchema, type KubeObject } from './objects.js';
import { collectionPath, objectPath, type ResourceKind } from './resources.js';
import { KubeTransport } from './transport.js';

export interface WriteOptions {
  signal?: AbortSignal;
}

export interface CreateOrUpdateOptions<T> extends WriteOptions {
  /**
   * Builds the object to PUT from the live one and the desired one. The default keeps the live
   * metadata (uid, finalizers, ...) with desired labels/annotations merged over it, and merges
   * `spec` one level deep so server-set fields (a Service's clusterIP) survive. As with
   * controller-runtime, "unchanged" means the mutated object deep-equals the live one, so a
   * desired object should spell out fields the server would default (e.g. port `protocol`),
   * or every call writes.
   */
  mutate?: (existing: T, desired: T) => T;
  /** Re-reads and retries after a 409 Conflict this many times; 5. */
  maxConflictRetries?: number;
}

export type WriteOperation = 'created' | 'updated' | 'unchanged';

export function defaultMutate<T extends KubeObject>(existing: T, desired: T): T {
  const ex = existing as KubeObject & { spec?: unknown };
  const de = desired as KubeObject & { spec?: unknown };
  const isRecord = (v: unknown): v is Record<string, unknown> =>
    typeof v === 'object' && v !== null && !Array.isArray(v);
  const metadata: KubeObject['metadata'] = { ...ex.metadata, resourceVersion: ex.metadata.resourceVersion };
  if (ex.metadata.labels || de.metadata.labels) {
    metadata.labels = { ...(ex.metadata.labels ?? {}), ...(de.metadata.labels ?? {}) };
  }
  if (ex.metadata.annotations || de.metadata.annotations) {
    metadata.annotations = { ...(ex.metadata.annotations ?? {}), ...(de.metadata.annotations ?? {}) };
  }
  const merged: KubeObject & { spec?: unknown } = { ...ex, ...de, metadata };
  if (isRecord(ex.spec) && isRecord(de.spec)) merged.spec = { ...ex.spec, ...de.spec };
  return merged as T;
}

/** Reads and writes single objects, with Kubernetes' error semantics made explicit. */
export class KubeClient {
  readonly transport: KubeTransport;

  constructor(source: KubeConfig | KubeTransport) {
    this.transport = source instanceof KubeTransport ? source : new KubeTransport(source);
  }

  /** The object, or undefined on 404. */
  async get<S extends z.ZodType<KubeObject>>(
    kind: ResourceKind<S>,
    namespace: string | undefined,
    name: string,
    opts: WriteOptions = {},
  ): Promise<z.infer<S> | undefined> {
    try {
      return await this.transport.json(
        { path: objectPath(kind, namespace, name), ...sig(opts) },
        kind.schema,
      );
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  async create<S extends z.ZodType<KubeObject>>(
    kind: ResourceKind<S>,
    obj: z.infer<S>,
    opts: WriteOptions = {},
  ): Promise<z.infer<S>> {
    const body = withTypeMeta(kind, obj);
    delete (body.metadata as { resourceVersion?: string }).resourceVersion;
    return this.transport.json(
      { method: 'POST', path: collectionPath(kind, obj.metadata.namespace), body, ...sig(opts) },
      kind.schema,
    );
  }

  /** PUT; `obj.metadata.resourceVersion` is the precondition (409 Conflict when stale). */
  async replace<S extends z.ZodType<KubeObject>>(
    kind: ResourceKind<S>,
    obj: z.infer<S>,
    opts: WriteOptions = {},
  ): Promise<z.infer<S>> {
    return this.transport.json(
      {
        method: 'PUT',
        path: objectPath(kind, obj.metadata.namespace, obj.metadata.name),
        body: withTypeMeta(kind, obj),
        ...sig(opts),
      },
      kind.schema,
    );
  }

  /**
   * Get; create on 404 (an AlreadyExists race retries as an update); otherwise update with the
   * observed resourceVersion, re-reading and retrying on 409 Conflict a bounded number of times.
   * No write when the mutated object equals the live one.
   */
  async createOrUpdate<S extends z.ZodType<KubeObject>>(
    kind: ResourceKind<S>,
    desired: z.infer<S>,
    opts: CreateOrUpdateOptions<z.infer<S>> = {},
  ): Promise<{ object: z.infer<S>; operation: WriteOperation; attempts: number }> {
    const { namespace, name } = desired.metadata;
    const max = opts.maxConflictRetries ?? 5;
    const mutate = opts.mutate ?? defaultMutate;
    let lastErr: unknown;
    for (let attempt = 1; attempt <= max + 1; attempt++) {
      const existing = await this.get(kind, namespace, name, opts);
      if (existing === undefined) {
        try {
          return { object: await this.create(kind, desired, opts), operation: 'created', attempts: attempt };
        } catch (err) {
          if (!isAlreadyExists(err)) throw err;
          lastErr = err;
          continue;
        }
      }
      const next = mutate(existing, desired);
      next.metadata = { ...next.metadata, resourceVersion: existing.metadata.resourceVersion };
      if (isDeepStrictEqual(stripTypeMeta(next), stripTypeMeta(existing))) {
        return { object: existing, operation: 'unchanged', attempts: attempt };
      }
      try {
        return { object: await this.replace(kind, next, opts), operation: 'updated', attempts: attempt };
      } catch (err) {
        if (!isConflict(err)) throw err;
        lastErr = err;
      }
    }
    throw lastErr;
  }

  /** JSON merge patch (`application/merge-patch+json`, RFC 7386): `null` deletes a field. */
  async mergePatch<S extends z.ZodType<KubeObject>>(
    kind: ResourceKind<S>,
    namespace: string | undefined,
    name: string,
    patch: Record<string, unknown>,
    opts: WriteOptions = {},
  ): Promise<z.infer<S>> {
    return this.transport.json(
      {
        method: 'PATCH',
        path: objectPath(kind, namespace, name),
        body: patch,
        contentType: PatchStrategy.MergePatch,
        ...sig(opts),
      },
      kind.schema,
    );
  }

  /**
   * Deletes; a 404 counts as success. Returns true if this call deleted it. `uid` adds a
   * precondition so a re-created object with the same name is not removed (409 then).
   */
  async deleteIfExists(
    kind: ResourceKind,
    namespace: string | undefined,
    name: string,
    opts: WriteOptions & { uid?: string; resourceVersion?: string } = {},
  ): Promise<boolean> {
    const preconditions: Record<string, string> = {};
    if (opts.uid) preconditions['uid'] = opts.uid;
    if (opts.resourceVersion) preconditions['resourceVersion'] = opts.resourceVersion;
    try {
      await this.transport.json(
        {
          method: 'DELETE',
          path: objectPath(kind, namespace, name),
          ...(Object.keys(preconditions).length
            ? { body: { apiVersion: 'v1', kind: 'DeleteOptions', preconditions } }
            : {}),
          ...sig(opts),
        },
        // The answer is the deleted object or a Status; neither is needed.
        StatusSchema.or(kind.schema),
      );
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }
}

function sig(opts: WriteOptions): { signal?: AbortSignal } {
  return opts.signal ? { signal: opts.signal } : {};
}

function withTypeMeta<T extends KubeObject>(kind: ResourceKind, obj: T): T {
  return { ...obj, apiVersion: kind.apiVersion, kind: kind.kind, metadata: { ...obj.metadata } };
}

function stripTypeMeta(obj: KubeObject): unknown {
  const { apiVersion: _a, kind: _k, ...rest } = obj;
  return rest;
}
