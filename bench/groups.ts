/**
 * Pure-core benchmark of hostname groups: `project()` + `plan()` for N endpoints on a few
 * hostnames (large groups, each member on its own port) against N endpoints on N hostnames, in
 * the same run. Two passes each: the first over an empty cluster (everything is a create) and a
 * steady one over the cluster the first produced (nothing to write). Target: groups within 2×.
 *
 *   npx tsx bench/groups.ts [-- --endpoints 10000 --hostnames 10 --runs 5]
 */
import { z } from 'zod';
import { parseBenchArgs } from './support/args.js';
import { plan } from '../src/binding/plan.js';
import { project } from '../src/binding/project.js';
import type { EndpointRecord, NamespacePhase, ProjectionConfig } from '../src/binding/types.js';
import type { Service } from '../src/kube/objects.js';

const Args = z.object({
  endpoints: z.coerce.number().int().min(10).max(100_000).default(10_000),
  hostnames: z.coerce.number().int().min(1).max(1_000).default(10),
  runs: z.coerce.number().int().min(1).max(50).default(5),
});
const args = parseBenchArgs('bench/groups.ts', Args);

const OPNS = 'endpoint-binder';
const config: ProjectionConfig = {
  identity: { release: 'bench', operatorNamespace: OPNS },
  clusterDomain: 'cluster.local',
  portRange: { min: 10000, max: 39999 },
  serviceLabels: {},
  serviceAnnotations: {},
  groupLimits: { endpointsPerHostname: args.endpoints, portsPerHostname: args.endpoints },
};

function endpoints(hostnames: number | 'distinct'): EndpointRecord[] {
  return Array.from({ length: args.endpoints }, (_, i) => {
    const url =
      hostnames === 'distinct'
        ? `http://svc-${i}.ns-${i % 100}:80`
        : `http://host-${i % hostnames}.ns-${i % hostnames}:${1024 + Math.floor(i / hostnames)}`;
    return {
      id: `ep_${String(i).padStart(26, '0')}`,
      url,
      created_at: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString(),
    };
  });
}

const namespaces = new Map<string, NamespacePhase>([[OPNS, 'Active']]);
for (let i = 0; i < 100; i++) namespaces.set(`ns-${i}`, 'Active');

/** What an API server would hold after creating `svc`: server-set fields added. */
function stored(svc: Service, n: number): Service {
  const s = structuredClone(svc);
  s.metadata.uid = `uid-${n}`;
  s.metadata.resourceVersion = String(n);
  s.metadata.creationTimestamp = '2026-01-01T00:00:00Z';
  if (s.spec?.type !== 'ExternalName') s.spec = { ...s.spec, clusterIP: '10.96.0.1' };
  return s;
}

let seed = 1;
const random = (): number => {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed / 2147483648;
};

function pass(
  eps: EndpointRecord[],
  owned: Service[],
): { ms: number; services: Map<string, Service>; actions: number; ports: number } {
  const t0 = performance.now();
  const desired = project({
    endpoints: eps,
    select: () => ({ selected: true }),
    cluster: { owned, namespaces, foreign: new Set() },
    config,
    random,
  });
  const live = new Map(owned.map((s) => [`${s.metadata.namespace}/${s.metadata.name}`, s]));
  const actions = plan(desired.services, live, { allowDeletes: true, frozenNamespaces: new Set() });
  const ms = performance.now() - t0;
  let ports = 0;
  for (const s of desired.services.values()) ports += s.spec?.ports?.length ?? 0;
  return { ms, services: desired.services, actions: actions.length, ports };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

function measure(label: string, eps: EndpointRecord[]): { first: number; steady: number } {
  const firsts: number[] = [];
  const steadies: number[] = [];
  let info = '';
  for (let r = 0; r < args.runs; r++) {
    const first = pass(eps, []);
    const owned = [...first.services.values()].map((s, i) => stored(s, i + 1));
    const steady = pass(eps, owned);
    firsts.push(first.ms);
    steadies.push(steady.ms);
    info = `services ${first.services.size}, ports listed ${first.ports}, first-pass actions ${first.actions}, steady actions ${steady.actions}`;
  }
  console.log(
    `${label}: first pass median ${median(firsts).toFixed(1)} ms, steady pass median ${median(steadies).toFixed(1)} ms (${info})`,
  );
  return { first: median(firsts), steady: median(steadies) };
}

console.log(`node ${process.version}, ${args.endpoints} endpoints, ${args.runs} runs each`);
// Warm-up so the JIT state is the same for both.
pass(endpoints('distinct').slice(0, 1000), []);
const distinct = measure('distinct hostnames', endpoints('distinct'));
const grouped = measure(`${args.hostnames} hostnames`, endpoints(args.hostnames));
console.log(
  `ratio groups/distinct: first pass ${(grouped.first / distinct.first).toFixed(2)}×, steady pass ${(grouped.steady / distinct.steady).toFixed(2)}× (target ≤ 2×)`,
);
