import { randomInt } from 'node:crypto';
import type { ResourceHandlers } from '../handlers.js';
import { resourceKey, type ResourceDef } from '../resources/registry.js';
import { ApiError } from '../status.js';
import type { Store } from '../store.js';
import type { KubeObject } from '../types.js';
import { controllerUid } from './pod-template.js';

/** What kubesim's workload controllers (Deployments, Jobs) do alike to the pods they own. */

const SUFFIX_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** The 5 random characters a controller appends to a pod's name (the apiserver's generateName alphabet). */
export function podNameSuffix(): string {
  let s = '';
  for (let i = 0; i < 5; i++) s += SUFFIX_ALPHABET.charAt(randomInt(SUFFIX_ALPHABET.length));
  return s;
}

/** Deletes one pod (graceful, as a controller does); one already gone is not an error. */
export function deletePod(
  handlers: ResourceHandlers,
  pods: ResourceDef,
  namespace: string,
  name: string,
): void {
  try {
    handlers.delete(pods, namespace, name, {});
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
  }
}

/** The garbage collector for a deleted owner: every pod it controlled goes. */
export function deleteOwnedPods(
  store: Store,
  handlers: ResourceHandlers,
  pods: ResourceDef,
  namespace: string,
  ownerUid: string | undefined,
): void {
  if (!ownerUid) return;
  for (const p of store.list(resourceKey(pods), namespace))
    if (controllerUid(p) === ownerUid && !p.metadata.deletionTimestamp)
      deletePod(handlers, pods, namespace, p.metadata.name);
}

/**
 * Writes an owner's status subresource, as its controller does: without the resourceVersion it
 * read (the status is recomputed whole each sync); an owner gone meanwhile is not an error.
 */
export function writeOwnerStatus(
  handlers: ResourceHandlers,
  statusDef: ResourceDef,
  owner: KubeObject,
  status: Record<string, unknown>,
): void {
  const { resourceVersion: _rv, ...meta } = owner.metadata;
  try {
    handlers.update(
      statusDef,
      owner.metadata.namespace,
      owner.metadata.name,
      { value: { ...owner, metadata: meta, status }, duplicates: [] },
      {},
    );
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
  }
}
