import { isRecord, type KubeObject } from '../types.js';
import { keyRef, type Lookup } from './pod-volumes.js';

/**
 * A container's env as the kubelet resolves it at each start: literal values (with `$(VAR)`
 * expanded from the names before them), the downward API's fields, and ConfigMap and Secret keys
 * (through `lookup`). A missing non-optional reference is the reason the container cannot start
 * yet. Pure: the node agent fetches what the pod refers to first.
 */

type Rec = Record<string, unknown>;
const rec = (v: unknown): Rec => (isRecord(v) ? v : {});

export interface PodPlace {
  nodeName: string;
  podIP: string;
  hostIP: string;
}

export interface EnvResolution {
  env: Record<string, string>;
  /** References that named neither a field, a ConfigMap nor a Secret (logged, not fatal). */
  unresolved: string[];
}

export function resolveEnv(
  pod: KubeObject,
  container: Rec,
  place: PodPlace,
  lookup: Lookup,
): EnvResolution | { error: string } {
  const env: Record<string, string> = {};
  const unresolved: string[] = [];
  const namespace = pod.metadata.namespace ?? '';
  for (const e of Array.isArray(container['env']) ? container['env'] : []) {
    const item = rec(e);
    const name = item['name'];
    if (typeof name !== 'string') continue;
    if (typeof item['value'] === 'string') {
      env[name] = item['value'].replace(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (m, v: string) => env[v] ?? m);
      continue;
    }
    const from = rec(item['valueFrom']);
    const field = fieldRef(pod, from, place);
    if (field !== undefined) {
      env[name] = field;
      continue;
    }
    const ref = keyRef(lookup, namespace, from);
    if (ref && 'error' in ref) return { error: ref.error };
    if (ref) env[name] = ref.value;
    else if (Object.keys(from).length) unresolved.push(name);
  }
  return { env, unresolved };
}

function fieldRef(pod: KubeObject, from: Rec, place: PodPlace): string | undefined {
  const fieldPath = rec(from['fieldRef'])['fieldPath'];
  if (typeof fieldPath !== 'string') return undefined;
  const spec = rec(pod['spec']);
  const m = /^metadata\.(labels|annotations)\['(.+)'\]$/.exec(fieldPath);
  if (m) return rec(pod.metadata[m[1] ?? ''])[m[2] ?? ''] as string | undefined;
  const fields: Record<string, string | undefined> = {
    'metadata.name': pod.metadata.name,
    'metadata.namespace': pod.metadata.namespace ?? '',
    'metadata.uid': pod.metadata.uid,
    'spec.nodeName': place.nodeName,
    'spec.serviceAccountName':
      typeof spec['serviceAccountName'] === 'string' ? spec['serviceAccountName'] : 'default',
    'status.podIP': place.podIP,
    'status.hostIP': place.hostIP,
  };
  return fields[fieldPath];
}

/** The ConfigMaps and Secrets a pod's first container refers to (env keys and volumes). */
export function podReferences(
  pod: KubeObject,
  container: Rec,
): { plural: 'configmaps' | 'secrets'; name: string }[] {
  const refs = new Map<string, { plural: 'configmaps' | 'secrets'; name: string }>();
  const add = (plural: 'configmaps' | 'secrets', name: unknown): void => {
    if (typeof name === 'string') refs.set(`${plural}/${name}`, { plural, name });
  };
  for (const e of Array.isArray(container['env']) ? container['env'] : []) {
    const from = rec(rec(e)['valueFrom']);
    add('configmaps', rec(from['configMapKeyRef'])['name']);
    add('secrets', rec(from['secretKeyRef'])['name']);
  }
  const volumes = rec(pod['spec'])['volumes'];
  for (const v of Array.isArray(volumes) ? volumes.map(rec) : []) {
    add('configmaps', rec(v['configMap'])['name']);
    add('secrets', rec(v['secret'])['secretName']);
  }
  return [...refs.values()];
}
