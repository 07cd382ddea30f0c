import type { AgeKey } from './age.js';
import type { EndpointUrl } from './endpoint-url.js';
import { namespaceNameVerdict, namespaceVerdict } from './namespace-policy.js';
import { isDns1035Label } from './naming.js';
import { endpointView } from './selector.js';
import type { EndpointView } from './selector.js';
import { DEFAULT_GROUP_LIMITS } from './types.js';
import type {
  ClusterView,
  EndpointRecord,
  NamespacePhase,
  ProjectionConfig,
  ProjectionState,
  SelectorOutcome,
} from './types.js';

/**
 * The rungs of the projection ladder (project.ts lists their order, docs/projection.md says why),
 * each a small named check that decides one endpoint's state with its reason, or passes it on to
 * the next rung. Pure.
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

/** An endpoint past the rungs that look at it alone. */
export interface Candidate {
  index: number;
  ep: EndpointRecord;
  url: EndpointUrl;
  internalName: string;
  age: AgeKey;
}

/** A rung's decision; undefined: the rung passes the endpoint on to the next. */
export type Verdict = { state: ProjectionState; reason: string } | undefined;

/** What every rung may read: the input and what one projection derives from it once. */
export interface Run {
  input: ProjectionInput;
  config: ProjectionConfig;
  cluster: ClusterView;
  /** The operator namespace. */
  opns: string;
  /** "is not managed by this install (…)", the default reason of a foreign holder. */
  notOurs: string;
  /** The rule closing a namespace, undefined when the namespace policy admits it (memoised). */
  closedBy: (namespace: string) => string | undefined;
}

export function key(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}

/** `9m 5s`, `42s`. */
function formatSeconds(total: number): string {
  const m = Math.floor(total / 60);
  const sec = total % 60;
  return m > 0 ? `${m}m ${sec}s` : `${sec}s`;
}

export function startRun(input: ProjectionInput): Run {
  const { config, cluster } = input;
  const opns = config.identity.operatorNamespace;
  const closed = new Map<string, string | undefined>();
  const closedBy = (namespace: string): string | undefined => {
    if (config.namespacePolicy === undefined) return undefined;
    if (!closed.has(namespace)) {
      const verdict = cluster.namespaces.has(namespace)
        ? namespaceVerdict(
            config.namespacePolicy,
            opns,
            namespace,
            cluster.namespaceLabels?.get(namespace) ?? {},
          )
        : namespaceNameVerdict(config.namespacePolicy, opns, namespace);
      closed.set(namespace, verdict.open ? undefined : verdict.rule);
    }
    return closed.get(namespace);
  };
  return {
    input,
    config,
    cluster,
    opns,
    notOurs: `is not managed by this install (release "${config.identity.release}", operator namespace "${opns}")`,
    closedBy,
  };
}

/** The first verdict of `rungs`, in order; undefined when every rung passes. */
export function firstVerdict<A extends unknown[]>(
  rungs: readonly ((...args: A) => Verdict)[],
  ...args: A
): Verdict {
  for (const rung of rungs) {
    const verdict = rung(...args);
    if (verdict !== undefined) return verdict;
  }
  return undefined;
}

// Rungs 1–3: each endpoint on its own (rung 1, the URL rules, parses the URL the others read).

/** Rung 1: URL rules 1–4 → `invalid-url`. */
export function urlRung(ep: EndpointRecord, message: string): NonNullable<Verdict> {
  return { state: 'invalid-url', reason: `the URL "${ep.url}" is invalid: ${message}` };
}

export type EndpointRung = (run: Run, ep: EndpointRecord, url: EndpointUrl) => Verdict;

/** Rung 2: the selector is false, or failed on it → `not-selected` (over its budget: `error`). */
export const selectorRung: EndpointRung = (run, ep, url) => {
  const outcome = run.input.select(endpointView(ep, url));
  if (outcome.overBudget)
    return { state: 'error', reason: outcome.error ?? 'the endpoint selector ran over its budget' };
  if (outcome.selected) return undefined;
  return {
    state: 'not-selected',
    reason:
      outcome.error !== undefined
        ? `the endpoint selector failed on this endpoint: ${outcome.error}`
        : 'the endpoint selector is false for this endpoint',
  };
};

/** Rung 3: the name part must be a DNS-1035 label → `invalid-url`. */
export const serviceNameRung: EndpointRung = (_run, ep, url) =>
  isDns1035Label(url.name)
    ? undefined
    : {
        state: 'invalid-url',
        reason: `the name part "${url.name}" of "${ep.url}" cannot be a Service name: it must be a DNS-1035 label (start with a letter)`,
      };

export const ENDPOINT_RUNGS: readonly EndpointRung[] = [selectorRung, serviceNameRung];

// Rungs 4–5: the internal Service name, oldest endpoint first.

export type NameRung = (run: Run, c: Candidate, holders: ReadonlyMap<string, Candidate>) => Verdict;

/** Rung 4a: held by a Service of this install that no proof makes ours → `unproven`. */
export const unprovenNameRung: NameRung = (run, c) => {
  const unproven = run.cluster.unproven?.get(key(run.opns, c.internalName));
  return unproven === undefined ? undefined : { state: 'unproven', reason: unproven };
};

/** Rung 4b: held by a Service not of this install → `name-conflict`. */
export const foreignNameRung: NameRung = (run, c) => {
  const name = key(run.opns, c.internalName);
  if (!run.cluster.foreign.has(name)) return undefined;
  const detail =
    run.cluster.foreignDetail?.get(name) ??
    `${run.notOurs}; this endpoint's internal Service cannot be created`;
  return { state: 'name-conflict', reason: `Service ${name} ${detail}` };
};

/** Rung 5: an older endpoint has the same internal name → `name-conflict`. */
export const olderNameHolderRung: NameRung = (_run, c, holders) => {
  const holder = holders.get(c.internalName);
  return holder === undefined
    ? undefined
    : {
        state: 'name-conflict',
        reason: `older endpoint ${holder.ep.id} already has the internal Service name ${c.internalName}`,
      };
};

export const NAME_RUNGS: readonly NameRung[] = [unprovenNameRung, foreignNameRung, olderNameHolderRung];

// Rungs 5a–5b: joining a hostname group, oldest first.

/** A hostname group while it is filled: its members so far and their distinct port numbers. */
export interface FillingGroup {
  members: Candidate[];
  portNumbers: Set<number>;
}

export type JoinRung = (run: Run, c: Candidate, group: FillingGroup) => Verdict;

/** Rung 5b: the hostname already has as many endpoints as it may → `group-too-large`. */
export const endpointsPerHostnameRung: JoinRung = (run, c, group) => {
  const max = (run.config.groupLimits ?? DEFAULT_GROUP_LIMITS).endpointsPerHostname;
  return group.members.length < max
    ? undefined
    : {
        state: 'group-too-large',
        reason: `hostname ${c.url.host} already has ${max} older endpoints (bindings.limits.endpointsPerHostname); this one is not projected`,
      };
};

/** Rung 5b: a new port number beyond the hostname's distinct ports → `group-too-large`. */
export const portsPerHostnameRung: JoinRung = (run, c, group) => {
  const max = (run.config.groupLimits ?? DEFAULT_GROUP_LIMITS).portsPerHostname;
  return group.portNumbers.has(c.url.port) || group.portNumbers.size < max
    ? undefined
    : {
        state: 'group-too-large',
        reason: `hostname ${c.url.host} already has ${max} ports (bindings.limits.portsPerHostname); port ${c.url.port} is not projected`,
      };
};

export const JOIN_RUNGS: readonly JoinRung[] = [endpointsPerHostnameRung, portsPerHostnameRung];

/**
 * Rung 5a (decided before any group is filled): a namespace the policy closes gets no alias, so
 * its endpoints need no forwarder port and no internal Service either → `namespace-denied`.
 */
export function namespaceDeniedRung(run: Run, c: Candidate): Verdict {
  const denied = run.closedBy(c.url.namespace);
  return denied === undefined
    ? undefined
    : {
        state: 'namespace-denied',
        reason: `${denied}; no alias Service ${key(c.url.namespace, c.url.name)} is written`,
      };
}

// Rung 6: the alias name, decided for the whole group.

/** One hostname group's alias, as its rungs read it. */
export interface AliasView {
  namespace: string;
  name: string;
  /** `namespace/name`. */
  key: string;
  /** The namespace's phase; undefined: it does not exist. */
  phase: NamespacePhase | undefined;
  /** The holders of internal Service names (rung 5's winners). */
  nameHolders: ReadonlyMap<string, Candidate>;
}

export type AliasRung = (run: Run, alias: AliasView) => Verdict;

// A foreign Service cannot exist in a namespace that does not: a stale entry there must not
// hide `namespace-missing`. A closed namespace is not even asked about (decided at rung 5a).

/** Rung 6a: the alias name is held by a Service of this install no proof makes ours → `unproven`. */
export const unprovenAliasRung: AliasRung = (run, alias) => {
  const unproven = alias.phase === undefined ? undefined : run.cluster.unproven?.get(alias.key);
  return unproven === undefined ? undefined : { state: 'unproven', reason: unproven };
};

/** Rung 6b: the alias name is held by a foreign Service → `name-conflict`. */
export const foreignAliasRung: AliasRung = (run, alias) => {
  if (alias.phase === undefined || !run.cluster.foreign.has(alias.key)) return undefined;
  const detail =
    run.cluster.foreignDetail?.get(alias.key) ?? `${run.notOurs}; the alias Service cannot be created`;
  return { state: 'name-conflict', reason: `Service ${alias.key} ${detail}` };
};

/** Rung 6c: a foreign Service held the alias name less than the grace period ago → `name-conflict`. */
export const recentlyFreedAliasRung: AliasRung = (run, alias) => {
  const leftMs = alias.phase === undefined ? 0 : (run.cluster.recentlyFreed?.get(alias.key) ?? 0);
  if (leftMs <= 0) return undefined;
  return {
    state: 'name-conflict',
    reason: `Service ${alias.key} was held by a Service not managed by this install until recently; an alias takes the name only after it has been free for the grace period (${formatSeconds(Math.ceil(leftMs / 1000))} left)`,
  };
};

/** Rung 6d: the alias name is one of our internal Services → `name-conflict`. */
export const internalNameAliasRung: AliasRung = (run, alias) => {
  const holder = alias.namespace === run.opns ? alias.nameHolders.get(alias.name) : undefined;
  return holder === undefined
    ? undefined
    : {
        state: 'name-conflict',
        reason: `the alias name ${alias.key} is the internal Service of endpoint ${holder.ep.id}`,
      };
};

export const ALIAS_RUNGS: readonly AliasRung[] = [
  unprovenAliasRung,
  foreignAliasRung,
  recentlyFreedAliasRung,
  internalNameAliasRung,
];

// Rungs 6–10: each member of a group.

/** What a member's rungs read of its group. */
export interface MemberView {
  host: string;
  alias: AliasView;
  /** Rung 6's verdict for the whole group. */
  aliasTaken: Verdict;
  /** The oldest member on each `host:port`. */
  winners: ReadonlyMap<string, Candidate>;
  /** The forwarder port each URL got. */
  ports: ReadonlyMap<string, number>;
}

export type MemberRung = (run: Run, m: Candidate, group: MemberView) => Verdict;

/** The oldest member on `m`'s host:port (its URL wins the port number: rung 7). */
export function wins(winners: ReadonlyMap<string, Candidate>, m: Candidate): boolean {
  return winners.get(m.url.hostport)!.url.url === m.url.url;
}

/** Rung 6: the alias name is taken: the whole group shares the verdict. */
export const aliasTakenRung: MemberRung = (_run, _m, group) => group.aliasTaken;

/** Rung 7: an older member has another scheme on the same port → `port-conflict`. */
export const portConflictRung: MemberRung = (_run, m, group) => {
  if (wins(group.winners, m)) return undefined;
  const w = group.winners.get(m.url.hostport)!;
  return {
    state: 'port-conflict',
    reason: `port ${m.url.port} of ${group.host} is already used by ${w.url.url} of older endpoint ${w.ep.id}`,
  };
};

/** Rung 8: its URL got no forwarder port → `ports-exhausted`. */
export const portsExhaustedRung: MemberRung = (run, m, group) =>
  group.ports.has(m.url.url)
    ? undefined
    : {
        state: 'ports-exhausted',
        reason: `no free forwarder port left in the range ${run.config.portRange.min}-${run.config.portRange.max}`,
      };

/** Rung 10: the namespace is missing or terminating → `namespace-missing`. */
export const namespaceMissingRung: MemberRung = (_run, _m, { alias }) => {
  if (alias.phase === undefined)
    return {
      state: 'namespace-missing',
      reason: `namespace "${alias.namespace}" does not exist; the alias Service ${alias.key} is created when it does`,
    };
  if (alias.phase === 'Terminating')
    return {
      state: 'namespace-missing',
      reason: `namespace "${alias.namespace}" is being deleted; no alias Service is written there`,
    };
  return undefined;
};

/** Rung 9 (namespace-denied) was decided at 5a; a member past every rung here is `projected` (11). */
export const MEMBER_RUNGS: readonly MemberRung[] = [
  aliasTakenRung,
  portConflictRung,
  portsExhaustedRung,
  namespaceMissingRung,
];
