import { isRecord, type KubeObject } from '../types.js';
import type { PodVolume } from './runner.js';

/**
 * What the kubelet needs before it can start a container: its env references and its volumes,
 * resolved from the store. A missing Secret or ConfigMap (or key) is the kubelet's own waiting
 * reason, as on a node: `CreateContainerConfigError` for env, `ContainerCreating` with the mount
 * failure for a volume; the kubelet retries.
 */

type Rec = Record<string, unknown>;
const rec = (v: unknown): Rec => (isRecord(v) ? v : {});

export type Lookup = (
  plural: 'configmaps' | 'secrets',
  namespace: string,
  name: string,
) => KubeObject | undefined;

export interface Unresolved {
  reason: 'CreateContainerConfigError' | 'ContainerCreating';
  message: string;
}

const kindName = { configmaps: 'configmap', secrets: 'secret' } as const;

/** A ConfigMap's or Secret's data as file contents (Secrets base64-decoded), or why not. */
function dataOf(
  lookup: Lookup,
  plural: 'configmaps' | 'secrets',
  namespace: string,
  name: string,
): { files: Record<string, Buffer> } | { missing: string } {
  const obj = lookup(plural, namespace, name);
  if (!obj) return { missing: `${kindName[plural]} "${name}" not found` };
  const files: Record<string, Buffer> = {};
  for (const [k, v] of Object.entries(rec(obj['data'])))
    if (typeof v === 'string') files[k] = plural === 'secrets' ? Buffer.from(v, 'base64') : Buffer.from(v);
  return { files };
}

/** The env reference's value from a ConfigMap or Secret, or the kubelet's error text. */
export function keyRef(
  lookup: Lookup,
  namespace: string,
  from: Rec,
): { value: string } | { error: string } | undefined {
  for (const [ref, plural] of [
    ['configMapKeyRef', 'configmaps'],
    ['secretKeyRef', 'secrets'],
  ] as const) {
    const r = rec(from[ref]);
    if (typeof r['name'] !== 'string' || typeof r['key'] !== 'string') continue;
    const got = dataOf(lookup, plural, namespace, r['name']);
    if ('missing' in got) return r['optional'] === true ? { value: '' } : { error: got.missing };
    const bytes = got.files[r['key']];
    if (bytes) return { value: bytes.toString('utf8') };
    if (r['optional'] === true) return { value: '' };
    const kind = plural === 'secrets' ? 'Secret' : 'ConfigMap';
    return { error: `couldn't find key ${r['key']} in ${kind} ${namespace}/${r['name']}` };
  }
  return undefined;
}

/** The first container's mounts of configMap, secret and emptyDir volumes, with their files. */
export function resolveVolumes(pod: KubeObject, container: Rec, lookup: Lookup): PodVolume[] | Unresolved {
  const namespace = pod.metadata.namespace ?? '';
  const volumes = rec(pod['spec'])['volumes'];
  const out: PodVolume[] = [];
  for (const m of Array.isArray(container['volumeMounts']) ? container['volumeMounts'] : []) {
    const mount = rec(m);
    if (typeof mount['name'] !== 'string' || typeof mount['mountPath'] !== 'string') continue;
    const volume = rec(
      Array.isArray(volumes) ? volumes.find((v) => rec(v)['name'] === mount['name']) : undefined,
    );
    const source = isRecord(volume['configMap'])
      ? { plural: 'configmaps' as const, spec: volume['configMap'], name: volume['configMap']['name'] }
      : isRecord(volume['secret'])
        ? { plural: 'secrets' as const, spec: volume['secret'], name: volume['secret']['secretName'] }
        : undefined;
    if (!source) {
      if (isRecord(volume['emptyDir']))
        out.push({ name: mount['name'], mountPath: mount['mountPath'], files: {} });
      continue;
    }
    const got = dataOf(lookup, source.plural, namespace, String(source.name));
    if ('missing' in got) {
      if (source.spec['optional'] === true) {
        out.push({ name: mount['name'], mountPath: mount['mountPath'], files: {} });
        continue;
      }
      return {
        reason: 'ContainerCreating',
        message: `MountVolume.SetUp failed for volume "${mount['name']}" : ${got.missing}`,
      };
    }
    const items = source.spec['items'];
    const files: Record<string, Buffer> = {};
    if (Array.isArray(items)) {
      for (const it of items.map(rec)) {
        const bytes = got.files[String(it['key'])];
        if (!bytes)
          return {
            reason: 'ContainerCreating',
            message: `MountVolume.SetUp failed for volume "${mount['name']}" : configmap references non-existent config key: ${String(it['key'])}`,
          };
        files[String(it['path'])] = bytes;
      }
    } else Object.assign(files, got.files);
    out.push({ name: mount['name'], mountPath: mount['mountPath'], files });
  }
  return out;
}
