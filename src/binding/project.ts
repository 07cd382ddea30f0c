import type { Service } from '../kube/objects.js';
import { ageKey, compareAgeKeys } from './age.js';
import { parseEndpointUrl } from './endpoint-url.js';
import { aliasExternalName, internalServiceName } from './naming.js';
import { allocatePorts, portClaims, type PortAllocation } from './ports.js';
import {
  ALIAS_RUNGS,
  ENDPOINT_RUNGS,
  firstVerdict,
  JOIN_RUNGS,
  key,
  MEMBER_RUNGS,
  NAME_RUNGS,
  namespaceDeniedRung,
  startRun,
  urlRung,
  wins,
  type AliasView,
  type Candidate,
  type FillingGroup,
  type MemberView,
  type ProjectionInput,
  type Run,
} from './projection-rungs.js';
import { aliasService, internalService } from './services.js';
import type { GroupPort } from './services.js';
import type { DesiredState, EndpointRecord, EndpointStatus, ProjectionState } from './types.js';

export type { ProjectionInput } from './projection-rungs.js';

/**
 * The projection: endpoints + selector + cluster + config → the Services that should exist and
 * one status per endpoint (docs/projection.md). Pure; randomness is injected. One bad endpoint
 * never blocks another: every check decides for that endpoint (or its hostname group) only.
 *
 * Order of checks per endpoint (each a named rung in projection-rungs.ts; the lists ENDPOINT_RUNGS,
 * NAME_RUNGS, JOIN_RUNGS, ALIAS_RUNGS and MEMBER_RUNGS hold them in this order):
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

/** Records each endpoint's state and reason (over what an earlier step recorded). */
type Decide = (
  index: number,
  state: ProjectionState,
  reason: string,
  extra?: Partial<EndpointStatus>,
) => void;

/**
 * The pure projection as a generator: it yields (nothing) after every `chunk` units of work so a
 * driver can pause there; it returns the desired state. No I/O, no clock.
 */
export function* projectionSteps(
  input: ProjectionInput,
  chunk: number = PROJECTION_CHUNK,
): Generator<undefined, DesiredState, undefined> {
  const tick = chunkCounter(chunk);
  const run = startRun(input);
  const statuses: EndpointStatus[] = input.endpoints.map((ep) => ({
    id: ep.id,
    url: ep.url,
    state: 'error',
    reason: 'not decided',
  }));
  const decide: Decide = (index, state, reason, extra = {}) => {
    statuses[index] = { ...statuses[index]!, ...extra, state, reason };
  };
  // Rungs 1–3: each endpoint on its own.
  const candidates: Candidate[] = [];
  for (let index = 0; index < input.endpoints.length; index++) {
    const c = checkEndpoint(run, input.endpoints[index]!, index, decide);
    if (c) candidates.push(c);
    if (tick()) yield;
  }
  candidates.sort((a, b) => compareAgeKeys(a.age, b.age));
  const { holders, named } = holdInternalNames(run, candidates, decide);
  const { groups, members } = fillGroups(run, named, decide);
  // Within a group, the oldest member's URL wins a port number (rung 7).
  const winners = new Map<string, Candidate>(); // host:port → oldest member on it
  for (const c of members) if (!winners.has(c.url.hostport)) winners.set(c.url.hostport, c);
  const allocation = allocateMemberPorts(run, members, winners);
  const aliasUids = aliasUidsOf(run);
  const services = new Map<string, Service>();
  for (const [host, group] of groups) {
    if (tick(group.length)) yield;
    const view = memberView(run, host, group, { holders, winners, ports: allocation.ports });
    for (const [k, svc] of groupServices(run, group, view, aliasUids, statuses, decide)) services.set(k, svc);
  }
  return { services, statuses, ports: allocation.ports, repairs: allocation.repairs };
}

/** True every `chunk` units of work counted (the generator yields then). */
function chunkCounter(chunk: number): (units?: number) => boolean {
  const every = Math.max(1, Math.floor(chunk));
  let since = 0;
  return (units = 1) => {
    since += units;
    if (since < every) return false;
    since = 0;
    return true;
  };
}

/** Rungs 1–3 for one endpoint: its verdict is recorded, or it goes on as a candidate. */
function checkEndpoint(run: Run, ep: EndpointRecord, index: number, decide: Decide): Candidate | undefined {
  const parsed = parseEndpointUrl(ep.url);
  const verdict = parsed.ok
    ? firstVerdict(ENDPOINT_RUNGS, run, ep, parsed.value)
    : urlRung(ep, parsed.message);
  if (verdict !== undefined) decide(index, verdict.state, verdict.reason);
  if (verdict !== undefined || !parsed.ok) return undefined;
  const url = parsed.value;
  return { index, ep, url, internalName: internalServiceName(ep.id), age: ageKey(ep.created_at, ep.id) };
}

/** Rungs 4–5, oldest first: the candidates that hold their internal Service name. */
function holdInternalNames(
  run: Run,
  candidates: readonly Candidate[],
  decide: Decide,
): { holders: Map<string, Candidate>; named: Candidate[] } {
  const holders = new Map<string, Candidate>();
  const named: Candidate[] = [];
  for (const c of candidates) {
    const verdict = firstVerdict(NAME_RUNGS, run, c, holders);
    if (verdict !== undefined) {
      decide(c.index, verdict.state, verdict.reason);
      continue;
    }
    holders.set(c.internalName, c);
    named.push(c);
  }
  return { holders, named };
}

/**
 * Rungs 5a–5b: hostname groups, capped. The oldest members up to the caps take part, the rest
 * are `group-too-large` and take no port, so a group's cost is bounded whoever adds to it.
 */
function fillGroups(
  run: Run,
  named: readonly Candidate[],
  decide: Decide,
): { groups: Map<string, Candidate[]>; members: Candidate[] } {
  const filling = new Map<string, FillingGroup>();
  const members: Candidate[] = [];
  for (const c of named) {
    const denied = namespaceDeniedRung(run, c);
    if (denied !== undefined) {
      decide(c.index, denied.state, denied.reason);
      continue;
    }
    let g = filling.get(c.url.host);
    if (!g) filling.set(c.url.host, (g = { members: [], portNumbers: new Set() }));
    const verdict = firstVerdict(JOIN_RUNGS, run, c, g);
    if (verdict !== undefined) {
      decide(c.index, verdict.state, verdict.reason);
      continue;
    }
    g.portNumbers.add(c.url.port);
    g.members.push(c);
    members.push(c);
  }
  const groups = new Map<string, Candidate[]>();
  for (const [host, g] of filling) if (g.members.length > 0) groups.set(host, g.members);
  return { groups, members };
}

/** A forwarder port for each URL that won its host:port, from the cluster's claims. */
function allocateMemberPorts(
  run: Run,
  members: readonly Candidate[],
  winners: ReadonlyMap<string, Candidate>,
): PortAllocation {
  return allocatePorts({
    urls: members.filter((c) => wins(winners, c)).map((c) => c.url.url),
    claims: portClaims(run.cluster.owned.filter((s) => s.metadata.namespace === run.opns)),
    held: portClaims(run.cluster.unprovenInternal ?? []),
    hints: run.input.portHints,
    reserved: run.input.reserved,
    range: run.config.portRange,
    random: run.input.random,
  });
}

/** The uid of each alias this install holds, recorded on the internal Services that name it. */
function aliasUidsOf(run: Run): Map<string, string> {
  const aliasUids = new Map<string, string>();
  for (const s of run.cluster.owned)
    if (s.metadata.namespace !== run.opns && s.metadata.uid !== undefined)
      aliasUids.set(key(s.metadata.namespace ?? '', s.metadata.name), s.metadata.uid);
  return aliasUids;
}

/** What a group's members' rungs read, with rung 6 (the alias name) decided for the whole group. */
function memberView(
  run: Run,
  host: string,
  group: readonly Candidate[],
  known: {
    holders: ReadonlyMap<string, Candidate>;
    winners: ReadonlyMap<string, Candidate>;
    ports: ReadonlyMap<string, number>;
  },
): MemberView {
  const { name, namespace } = group[0]!.url;
  // Closed namespaces were decided at rung 5a; every group here is in an open one.
  const alias: AliasView = {
    namespace,
    name,
    key: key(namespace, name),
    phase: run.cluster.namespaces.get(namespace),
    nameHolders: known.holders,
  };
  return {
    host,
    alias,
    aliasTaken: firstVerdict(ALIAS_RUNGS, run, alias),
    winners: known.winners,
    ports: known.ports,
  };
}

/**
 * Rungs 6–11 for each member of one group, then the group's Services. Only the internal Service
 * the alias points at (the oldest projected member's) carries every port of the group; every
 * other one carries its own URL's port (a port-conflict loser: the winner's port of its
 * host:port). The group costs O(members), and a new member rewrites its own Service, the
 * target's and the alias, not every member's.
 */
function groupServices(
  run: Run,
  group: readonly Candidate[],
  view: MemberView,
  aliasUids: ReadonlyMap<string, string>,
  statuses: EndpointStatus[],
  decide: Decide,
): Map<string, Service> {
  const { groupPorts, portOf } = portsOfGroup(group, view);
  const decided = group.map((m) => ({ m, verdict: firstVerdict(MEMBER_RUNGS, run, m, view) }));
  const projected = decided.filter((d) => d.verdict === undefined).map((d) => d.m);
  const target = projected[0];
  const aliasKey = view.alias.key;
  const services = new Map<string, Service>();
  for (const { m, verdict } of decided) {
    const state = verdict?.state ?? 'projected';
    const reason = verdict?.reason ?? '';
    const own = view.ports.get(m.url.url);
    const extra: Partial<EndpointStatus> = {};
    if (own !== undefined && wins(view.winners, m)) extra.targetPort = own;
    const mine = portOf.get(m.url.hostport);
    const ports = m === target ? groupPorts : mine ? [mine] : [];
    // An internal Service for a member whose URL has a port, or which lost its port to an older
    // member (so the conflict shows in kubectl), as long as it has a port to list.
    if ((own !== undefined || !wins(view.winners, m)) && ports.length > 0) {
      const svc = internalService({
        name: m.internalName,
        endpointId: m.ep.id,
        url: m.url,
        state,
        reason,
        groupPorts: ports,
        config: run.config,
        // Recorded whatever the state: an alias left standing (a terminating namespace) stays ours.
        ...(aliasUids.has(aliasKey) ? { alias: `${aliasKey}/${aliasUids.get(aliasKey)!}` } : {}),
      });
      services.set(key(run.opns, m.internalName), svc);
      extra.internalService = { namespace: run.opns, name: m.internalName };
    }
    decide(m.index, state, reason, extra);
  }
  if (target) {
    const { name, namespace } = view.alias;
    services.set(
      aliasKey,
      aliasService({
        name,
        namespace,
        externalName: aliasExternalName(target.internalName, run.opns, run.config.clusterDomain),
        endpointIds: projected.map((p) => p.ep.id),
        groupPorts,
        config: run.config,
      }),
    );
    for (const p of projected) statuses[p.index]!.aliasService = { namespace, name };
  }
  return services;
}

/** The group's forwarder ports: one per winning URL that got one, in member order. */
function portsOfGroup(
  group: readonly Candidate[],
  view: MemberView,
): { groupPorts: GroupPort[]; portOf: Map<string, GroupPort> } {
  const groupPorts: GroupPort[] = [];
  const seen = new Set<string>();
  const portOf = new Map<string, GroupPort>(); // host:port → the winning URL's port
  for (const m of group) {
    const port = view.ports.get(m.url.url);
    if (port === undefined || !wins(view.winners, m) || seen.has(m.url.url)) continue;
    seen.add(m.url.url);
    const gp = { url: m.url, forwarderPort: port };
    groupPorts.push(gp);
    portOf.set(m.url.hostport, gp);
  }
  return { groupPorts, portOf };
}
