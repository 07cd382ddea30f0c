import type { KubeConfig } from '@kubernetes/client-node';
import { PatchStrategy } from '@kubernetes/client-node';
import type { z } from 'zod';
import { isNotFound } from './errors.js';
import { StatusSchema, type KubeObject } from './objects.js';
import { collectionPath, objectPath, type ResourceKind } from './resources.js';
import { KubeTransport } from './transport.js';

export interface WriteOptions {
  signal?: AbortSignal;
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
