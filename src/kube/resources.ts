import type { z } from 'zod';
import {
  ConfigMapSchema,
  EventSchema,
  LeaseSchema,
  NamespaceSchema,
  ServiceSchema,
  type KubeObject,
} from './objects.js';

/** Where a kind lives in the API and how its objects are parsed. */
export interface ResourceKind<S extends z.ZodType<KubeObject> = z.ZodType<KubeObject>> {
  /** `v1` or `group/version`. */
  apiVersion: string;
  kind: string;
  /** Lower-case plural used in paths. */
  plural: string;
  namespaced: boolean;
  schema: S;
}

export function defineKind<S extends z.ZodType<KubeObject>>(k: ResourceKind<S>): ResourceKind<S> {
  return k;
}

export const kinds = {
  service: defineKind({
    apiVersion: 'v1',
    kind: 'Service',
    plural: 'services',
    namespaced: true,
    schema: ServiceSchema,
  }),
  namespace: defineKind({
    apiVersion: 'v1',
    kind: 'Namespace',
    plural: 'namespaces',
    namespaced: false,
    schema: NamespaceSchema,
  }),
  configMap: defineKind({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    plural: 'configmaps',
    namespaced: true,
    schema: ConfigMapSchema,
  }),
  lease: defineKind({
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    plural: 'leases',
    namespaced: true,
    schema: LeaseSchema,
  }),
  event: defineKind({
    apiVersion: 'v1',
    kind: 'Event',
    plural: 'events',
    namespaced: true,
    schema: EventSchema,
  }),
} as const;

/**
 * The collection path of a kind: `/api/v1/services` (all namespaces), `/api/v1/namespaces/ns/services`,
 * `/apis/coordination.k8s.io/v1/namespaces/ns/leases`.
 */
export function collectionPath(kind: ResourceKind, namespace?: string): string {
  const root = kind.apiVersion.includes('/') ? `/apis/${kind.apiVersion}` : `/api/${kind.apiVersion}`;
  if (kind.namespaced && namespace)
    return `${root}/namespaces/${encodeURIComponent(namespace)}/${kind.plural}`;
  return `${root}/${kind.plural}`;
}

export function objectPath(kind: ResourceKind, namespace: string | undefined, name: string): string {
  if (kind.namespaced && !namespace) throw new Error(`${kind.kind} ${name}: a namespace is required`);
  return `${collectionPath(kind, namespace)}/${encodeURIComponent(name)}`;
}
