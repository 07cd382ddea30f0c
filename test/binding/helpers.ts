import { withCreatedAliases } from '../../src/binding/ownership/index.js';
import type { Service } from '../../src/kube/objects.js';
import type { ProjectionConfig } from '../../src/binding/types.js';

/** A small seeded PRNG (mulberry32): the same seed gives the same sequence in [0, 1). */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const OPNS = 'endpoint-binder';
export const RELEASE = 'eb';

export function config(overrides: Partial<ProjectionConfig> = {}): ProjectionConfig {
  return {
    identity: { release: RELEASE, operatorNamespace: OPNS },
    clusterDomain: 'cluster.local',
    portRange: { min: 10000, max: 19999 },
    serviceLabels: {},
    serviceAnnotations: {},
    ...overrides,
  };
}

/**
 * What a real API server stores for a Service we send: server-set fields added, per-type
 * defaults filled in, our fields untouched.
 */
export function asStored(svc: Service, n = 1): Service {
  const stored = structuredClone(svc);
  stored.metadata.uid = `uid-${n}`;
  stored.metadata.resourceVersion = String(100 + n);
  stored.metadata.creationTimestamp = '2026-01-01T00:00:00Z';
  const spec = stored.spec!;
  if (spec.type === 'ExternalName') {
    spec.sessionAffinity = 'None';
    spec.ports = spec.ports?.map((p) => ({ ...p, targetPort: p.targetPort ?? p.port }));
  } else {
    spec.clusterIP = `10.96.0.${n}`;
    spec.clusterIPs = [`10.96.0.${n}`];
    spec.ipFamilies = ['IPv4'];
    spec.ipFamilyPolicy = 'SingleStack';
    spec.sessionAffinity = 'None';
    spec.internalTrafficPolicy = 'Cluster';
  }
  stored.status = { loadBalancer: {} };
  return stored;
}

/**
 * What the controller's apply leaves in the cluster for a first projection's Services: each
 * stored (`asStored`, numbered from `start`), aliases first, so every projected internal Service
 * records the uid of the alias it names (withCreatedAliases, docs/projection.md "Ownership").
 */
export function asApplied(services: Iterable<Service>, start = 1): Service[] {
  const stored = [...services].map((s, i) => asStored(s, start + i));
  const aliasUids = new Map(
    stored
      .filter((s) => s.metadata.namespace !== OPNS)
      .map((s) => [`${s.metadata.namespace}/${s.metadata.name}`, s.metadata.uid!] as const),
  );
  return withCreatedAliases(
    stored.map((s) => ({
      op: 'create' as const,
      key: `${s.metadata.namespace}/${s.metadata.name}`,
      desired: s,
    })),
    aliasUids,
    OPNS,
  ).map((a) => (a.op === 'create' ? a.desired : (undefined as never)));
}
