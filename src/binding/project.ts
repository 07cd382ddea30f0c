import type { Service } from '../kube/objects.js';
import { ageKey, compareAgeKeys } from './age.js';
import type { AgeKey } from './age.js';
import { parseEndpointUrl } from './endpoint-url.js';
import type { EndpointUrl } from './endpoint-url.js';
import { namespaceNameVerdict, namespaceVerdict } from './namespace-policy.js';
import { aliasExternalName, internalServiceName, isDns1035Label } from './naming.js';
import { allocatePorts, portClaims } from './ports.js';
import { endpointView } from './selector.js';
import type { EndpointView } from './selector.js';
import { aliasService, internalService } from './services.js';
import type { GroupPort } from './services.js';
import { DEFAULT_GROUP_LIMITS } from './types.js';
import type {
  ClusterView,
  DesiredState,
  EndpointRecord,
  EndpointStatus,
  ProjectionConfig,
  ProjectionState,
  SelectorOutcome,
} from './types.js';

/**
 * The projection: endpoints + selector + cluster + config → the Services that should exist and
 * one status per endpoint (docs/projection.md). Pure; randomness is injected. One bad endpoint
 * never blocks another: every check decides for that endpoint (or its hostname group) only.
 *
 * Order of checks per endpoint:
 *   1. URL rules 1–4 → `invalid-url`
 *   2. the selector (false, or failed on it) → `not-selected`
 *   3. the name part must be a DNS-1035 label → `invalid-url`
 *   4. the internal name is held by a Service of this install no proof makes ours → `unproven`;
 *      by a Service not of this install → `name-conflict`
 *   5. an older endpoint has the same internal name → `name-conflict`
 *   then per hostname group (oldest first):
 *   5b. beyond the group caps (endpoints, distinct ports per hostname) → `group-too-large`
 *   6. the alias name is held by a foreign Service, or was until less than the grace period ago,
 *      or is one of our internal Services → the whole group `name-conflict` (not asked in a
 *      namespace the policy closes)
 *   7. an older member has another scheme on the same port → `port-conflict`
 *   8. its URL got no forwarder port → `ports-exhausted`
 *   9. (decided before the groups, as 5a: no forwarder port, no internal Service) the namespace
 *      policy closes the namespace (by name, or by its labels when it exists) → `namespace-denied`
 *   10. the namespace is missing or terminating → `namespace-missing`
 *   11. `projected`
 */

export interface ProjectionInput {
  endpoints: readonly EndpointRecord[];
  select: (view: EndpointView) => SelectorOutcome;
  cluster: ClusterView;
  config: ProjectionConfig;
  random: () => number;
  /** The controller's last allocation, used for a URL the cluster has no claim for. */
  portHints?: ReadonlyMap<string, number> | undefined;
  /** Ports reserved for removed URLs (port-reservations.ts). */
  reserved?: ReadonlyMap<string, number> | undefined;
}

interface Candidate {
  index: number;
  ep: EndpointRecord;
  url: EndpointUrl;
  internalName: string;
  age: AgeKey;
}

/** `9m 5s`, `42s`. */
function formatSeconds(total: number): string {
  const m = Math.floor(total / 60);
  const sec = total % 60;
  return m > 0 ? `${m}m ${sec}s` : `${sec}s`;
}

function key(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}

/** How many endpoints (or hostname groups) the projection handles between two yields. */
export const PROJECTION_CHUNK = 500;

/**
 * The projection, synchronous: runs `projectionSteps` to the end without yielding. For small
 * inputs and tests; the controller uses `projectInChunks` so a large pass does not hold the event
 * loop (lease renewal, probes) for its whole duration.
 */
export function project(input: ProjectionInput): DesiredState {
  const steps = projectionSteps(input);
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

/**
 * The projection, handing the event loop back every `chunk` units of work (an endpoint checked, a
 * hostname group decided): `pause()` is awaited between chunks (the shell passes a
 * `setImmediate` wait). The result is the same as `project()`'s: the steps are pure and the
 * input is not read from anything that changes while paused.
 */
export async function projectInChunks(
  input: ProjectionInput,
  pause: () => Promise<void>,
  chunk: number = PROJECTION_CHUNK,
): Promise<DesiredState> {
  const steps = projectionSteps(input, chunk);
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
    await pause();
  }
}

/**
 * The pure projection as a generator: it yields (nothing) after every `chunk` units of work so a
 * driver can pause there; it returns the desired state. No I/O, no clock.
 */
export function* projectionSteps(
  input: ProjectionInput,
  chunk: number = PROJECTION_CHUNK,
): Generator<undefined, DesiredState, undefined> {
  const every = Math.max(1, Math.floor(chunk));
  let since = 0;
  const tick = (units = 1): boolean => {
    since += units;
    if (since < every) return false;
    since = 0;
    return true;
  };
  const { config, cluster } = input;
  const opns = config.identity.operatorNamespace;
  // The uid of each alias this install holds, recorded on the internal Services that name it.
  const aliasUids = new Map<string, string>();
  for (const s of cluster.owned)
    if (s.metadata.namespace !== opns && s.metadata.uid !== undefined)
      aliasUids.set(key(s.metadata.namespace ?? '', s.metadata.name), s.metadata.uid);
  const notOurs = `is not managed by this install (release "${config.identity.release}", operator namespace "${opns}")`;
  const statuses: EndpointStatus[] = input.endpoints.map((ep) => ({
    id: ep.id,
    url: ep.url,
    state: 'error',
    reason: 'not decided',
  }));
  const decide = (
    index: number,
    state: ProjectionState,
    reason: string,
    extra: Partial<EndpointStatus> = {},
  ) => {
    statuses[index] = { ...statuses[index]!, ...extra, state, reason };
  };

  // Checks 1–3: each endpoint on its own.
  const candidates: Candidate[] = [];
  const checkOne = (ep: EndpointRecord, index: number): void => {
    const parsed = parseEndpointUrl(ep.url);
    if (!parsed.ok) return decide(index, 'invalid-url', `the URL "${ep.url}" is invalid: ${parsed.message}`);
    const url = parsed.value;
    const outcome = input.select(endpointView(ep, url));
    if (outcome.overBudget)
      return decide(index, 'error', outcome.error ?? 'the endpoint selector ran over its budget');
    if (!outcome.selected) {
      return decide(
        index,
        'not-selected',
        outcome.error !== undefined
          ? `the endpoint selector failed on this endpoint: ${outcome.error}`
          : 'the endpoint selector is false for this endpoint',
      );
    }
    if (!isDns1035Label(url.name)) {
      return decide(
        index,
        'invalid-url',
        `the name part "${url.name}" of "${ep.url}" cannot be a Service name: it must be a DNS-1035 label (start with a letter)`,
      );
    }
    candidates.push({
      index,
      ep,
      url,
      internalName: internalServiceName(ep.id),
      age: ageKey(ep.created_at, ep.id),
    });
  };
  for (let index = 0; index < input.endpoints.length; index++) {
    checkOne(input.endpoints[index]!, index);
    if (tick()) yield;
  }
  candidates.sort((a, b) => compareAgeKeys(a.age, b.age));

  // Checks 4–5: the internal Service name.
  const nameHolders = new Map<string, Candidate>();
  const named: Candidate[] = [];
  for (const c of candidates) {
    const holder = nameHolders.get(c.internalName);
    const unproven = cluster.unproven?.get(key(opns, c.internalName));
    if (unproven !== undefined) {
      decide(c.index, 'unproven', unproven);
    } else if (cluster.foreign.has(key(opns, c.internalName))) {
      decide(
        c.index,
        'name-conflict',
        `Service ${key(opns, c.internalName)} ${cluster.foreignDetail?.get(key(opns, c.internalName)) ?? `${notOurs}; this endpoint's internal Service cannot be created`}`,
      );
    } else if (holder) {
      decide(
        c.index,
        'name-conflict',
        `older endpoint ${holder.ep.id} already has the internal Service name ${c.internalName}`,
      );
    } else {
      nameHolders.set(c.internalName, c);
      named.push(c);
    }
  }

  // Hostname groups, capped: the oldest members up to the caps take part, the rest are
  // `group-too-large` and take no port, so a group's cost is bounded whoever adds to it.
  const limits = config.groupLimits ?? DEFAULT_GROUP_LIMITS;
  const groups = new Map<string, Candidate[]>();
  const groupPortNumbers = new Map<string, Set<number>>();
  const members: Candidate[] = [];
  // Check 5a: a namespace the policy closes gets no alias, so its endpoints need no forwarder
  // port and no internal Service either (decided per namespace, before any port is allocated).
  const closedBy = new Map<string, string | undefined>();
  const closed = (namespace: string): string | undefined => {
    if (config.namespacePolicy === undefined) return undefined;
    if (!closedBy.has(namespace)) {
      const verdict = cluster.namespaces.has(namespace)
        ? namespaceVerdict(
            config.namespacePolicy,
            opns,
            namespace,
            cluster.namespaceLabels?.get(namespace) ?? {},
          )
        : namespaceNameVerdict(config.namespacePolicy, opns, namespace);
      closedBy.set(namespace, verdict.open ? undefined : verdict.rule);
    }
    return closedBy.get(namespace);
  };
  for (const c of named) {
    const denied = closed(c.url.namespace);
    if (denied !== undefined) {
      decide(
        c.index,
        'namespace-denied',
        `${denied}; no alias Service ${key(c.url.namespace, c.url.name)} is written`,
      );
      continue;
    }
    let g = groups.get(c.url.host);
    if (!g) groups.set(c.url.host, (g = []));
    let portNumbers = groupPortNumbers.get(c.url.host);
    if (!portNumbers) groupPortNumbers.set(c.url.host, (portNumbers = new Set()));
    if (g.length >= limits.endpointsPerHostname) {
      decide(
        c.index,
        'group-too-large',
        `hostname ${c.url.host} already has ${limits.endpointsPerHostname} older endpoints (bindings.limits.endpointsPerHostname); this one is not projected`,
      );
      continue;
    }
    if (!portNumbers.has(c.url.port) && portNumbers.size >= limits.portsPerHostname) {
      decide(
        c.index,
        'group-too-large',
        `hostname ${c.url.host} already has ${limits.portsPerHostname} ports (bindings.limits.portsPerHostname); port ${c.url.port} is not projected`,
      );
      continue;
    }
    portNumbers.add(c.url.port);
    g.push(c);
    members.push(c);
  }
  for (const [host, g] of groups) if (g.length === 0) groups.delete(host);
  // Within a group, the oldest member's URL wins a port number (check 7).
  const winners = new Map<string, Candidate>(); // host:port → oldest member on it
  for (const c of members) if (!winners.has(c.url.hostport)) winners.set(c.url.hostport, c);
  const wins = (c: Candidate) => winners.get(c.url.hostport)!.url.url === c.url.url;

  const allocation = allocatePorts({
    urls: members.filter(wins).map((c) => c.url.url),
    claims: portClaims(cluster.owned.filter((s) => s.metadata.namespace === opns)),
    held: portClaims(cluster.unprovenInternal ?? []),
    hints: input.portHints,
    reserved: input.reserved,
    range: config.portRange,
    random: input.random,
  });

  const services = new Map<string, Service>();
  for (const [host, group] of groups) {
    if (tick(group.length)) yield;
    const { name, namespace } = group[0]!.url;
    const aliasKey = key(namespace, name);
    const groupPorts: GroupPort[] = [];
    const seen = new Set<string>();
    const portOf = new Map<string, GroupPort>(); // host:port → the winning URL's port
    for (const m of group) {
      const port = allocation.ports.get(m.url.url);
      if (port === undefined || !wins(m) || seen.has(m.url.url)) continue;
      seen.add(m.url.url);
      const gp = { url: m.url, forwarderPort: port };
      groupPorts.push(gp);
      portOf.set(m.url.hostport, gp);
    }
    const phase = cluster.namespaces.get(namespace);
    // Closed namespaces were decided above (check 5a); every group here is in an open one.
    // The alias name taken decides for the whole group. A foreign Service cannot exist in a
    // namespace that does not; a stale entry there must not hide `namespace-missing`.
    const aliasHolder = namespace === opns ? nameHolders.get(name) : undefined;
    let aliasTaken: string | undefined;
    let takenState: ProjectionState = 'name-conflict';
    const aliasUnproven = cluster.unproven?.get(aliasKey);
    // A closed namespace is not even asked about: no read of its Services is made for an alias.
    if (phase !== undefined && aliasUnproven !== undefined) {
      aliasTaken = aliasUnproven;
      takenState = 'unproven';
    } else if (phase !== undefined && cluster.foreign.has(aliasKey)) {
      aliasTaken = `Service ${aliasKey} ${cluster.foreignDetail?.get(aliasKey) ?? `${notOurs}; the alias Service cannot be created`}`;
    } else if (phase !== undefined && (cluster.recentlyFreed?.get(aliasKey) ?? 0) > 0) {
      const left = Math.ceil(cluster.recentlyFreed!.get(aliasKey)! / 1000);
      aliasTaken = `Service ${aliasKey} was held by a Service not managed by this install until recently; an alias takes the name only after it has been free for the grace period (${formatSeconds(left)} left)`;
    } else if (aliasHolder) {
      aliasTaken = `the alias name ${aliasKey} is the internal Service of endpoint ${aliasHolder.ep.id}`;
    }

    const projected: Candidate[] = [];
    const decided: { m: Candidate; state: ProjectionState; reason: string; own: number | undefined }[] = [];
    for (const m of group) {
      const own = allocation.ports.get(m.url.url);
      let state: ProjectionState;
      let reason = '';
      if (aliasTaken !== undefined) {
        state = takenState;
        reason = aliasTaken;
      } else if (!wins(m)) {
        const w = winners.get(m.url.hostport)!;
        state = 'port-conflict';
        reason = `port ${m.url.port} of ${host} is already used by ${w.url.url} of older endpoint ${w.ep.id}`;
      } else if (own === undefined) {
        state = 'ports-exhausted';
        reason = `no free forwarder port left in the range ${config.portRange.min}-${config.portRange.max}`;
      } else if (phase === undefined) {
        state = 'namespace-missing';
        reason = `namespace "${namespace}" does not exist; the alias Service ${aliasKey} is created when it does`;
      } else if (phase === 'Terminating') {
        state = 'namespace-missing';
        reason = `namespace "${namespace}" is being deleted; no alias Service is written there`;
      } else {
        state = 'projected';
        projected.push(m);
      }
      decided.push({ m, state, reason, own });
    }

    // Only the internal Service the alias points at (the oldest projected member's) carries
    // every port of the group; every other one carries its own URL's port (a port-conflict
    // loser: the winner's port of its host:port). The group costs O(members), and a new member
    // rewrites its own Service, the target's and the alias, not every member's.
    const target = projected[0];
    for (const { m, state, reason, own } of decided) {
      const extra: Partial<EndpointStatus> = {};
      if (own !== undefined && wins(m)) extra.targetPort = own;
      const mine = portOf.get(m.url.hostport);
      const ports = m === target ? groupPorts : mine ? [mine] : [];
      // An internal Service for a member whose URL has a port, or which lost its port to an older
      // member (so the conflict shows in kubectl), as long as it has a port to list.
      if ((own !== undefined || !wins(m)) && ports.length > 0) {
        const svc = internalService({
          name: m.internalName,
          endpointId: m.ep.id,
          url: m.url,
          state,
          reason,
          groupPorts: ports,
          config,
          // Recorded whatever the state: an alias left standing (a terminating namespace) stays ours.
          ...(aliasUids.has(aliasKey) ? { alias: `${aliasKey}/${aliasUids.get(aliasKey)!}` } : {}),
        });
        services.set(key(opns, m.internalName), svc);
        extra.internalService = { namespace: opns, name: m.internalName };
      }
      decide(m.index, state, reason, extra);
    }

    if (target) {
      services.set(
        aliasKey,
        aliasService({
          name,
          namespace,
          externalName: aliasExternalName(target.internalName, opns, config.clusterDomain),
          endpointIds: projected.map((p) => p.ep.id),
          groupPorts,
          config,
        }),
      );
      for (const p of projected) statuses[p.index]!.aliasService = { namespace, name };
    }
  }

  return { services, statuses, ports: allocation.ports, repairs: allocation.repairs };
}
