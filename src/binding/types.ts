import type { Service } from '../kube/objects.js';
import type { InstallIdentity } from './identity.js';
import type { NamespacePolicy } from './namespace-policy.js';

/**
 * The contract between the pure projection core (`src/binding/`) and the controller shell
 * (`src/controller/`). The core decides; the shell reads the world, calls the core, and writes.
 */

/** What became of one endpoint of the account; also the value of the `endpoint-binder.io/state` label. */
export type ProjectionState =
  | 'projected'
  | 'namespace-missing'
  | 'namespace-denied'
  | 'name-conflict'
  | 'unproven'
  | 'port-conflict'
  | 'invalid-url'
  | 'not-selected'
  | 'ports-exhausted'
  | 'group-too-large'
  | 'record-full'
  | 'error';

export const PROJECTION_STATES: readonly ProjectionState[] = [
  'projected',
  'namespace-missing',
  'namespace-denied',
  'name-conflict',
  'unproven',
  'port-conflict',
  'invalid-url',
  'not-selected',
  'ports-exhausted',
  'group-too-large',
  'record-full',
  'error',
];

/** A cluster-bound endpoint as the controller knows it (the fields of the API's Endpoint it uses). */
export interface EndpointRecord {
  id: string;
  url: string;
  description?: string | undefined;
  metadata?: string | undefined;
  /** RFC 3339; orders endpoints on one hostname (oldest wins), ties broken by id. */
  created_at: string;
}

/** The outcome of the selector on one endpoint; `error` set means "not selected" because evaluation failed. */
export interface SelectorOutcome {
  selected: boolean;
  error?: string;
  /** The evaluation ran over its runtime budget: the endpoint is `error`, not `not-selected`. */
  overBudget?: boolean;
}

/** Everything the projection depends on besides endpoints and the cluster. */
export interface ProjectionConfig {
  identity: InstallIdentity;
  /** Default `cluster.local`. */
  clusterDomain: string;
  /** Inclusive forwarder port range. */
  portRange: { min: number; max: number };
  /** Extra labels and annotations for every projected Service (ours win on a key clash). */
  serviceLabels: Record<string, string>;
  serviceAnnotations: Record<string, string>;
  /** Where aliases may be written; absent = every namespace (tools and tests without a cluster's consent). */
  namespacePolicy?: NamespacePolicy | undefined;
  /** Caps per hostname group (default `DEFAULT_GROUP_LIMITS`); members beyond are `group-too-large`. */
  groupLimits?: GroupLimits | undefined;
}

export interface GroupLimits {
  endpointsPerHostname: number;
  portsPerHostname: number;
}

export const DEFAULT_GROUP_LIMITS: GroupLimits = { endpointsPerHostname: 1000, portsPerHostname: 1000 };

export type NamespacePhase = 'Active' | 'Terminating';

/** The part of the cluster the projection reads, as the shell's caches see it. */
export interface ClusterView {
  /** Every Service carrying this install's ownership labels, in any namespace. */
  owned: readonly Service[];
  /** Every namespace that exists, with its phase. */
  namespaces: ReadonlyMap<string, NamespacePhase>;
  /** `namespace/name` of Services known to exist that are not this install's (learned from AlreadyExists). */
  foreign: ReadonlySet<string>;
  /** For some of `foreign`: why the holder is not ours, said instead of "not managed by this install". */
  foreignDetail?: ReadonlyMap<string, string> | undefined;
  /**
   * Alias names a foreign Service held until recently, with the milliseconds left of the grace
   * period before an alias may take them (docs/projection.md "Names a tenant used").
   */
  recentlyFreed?: ReadonlyMap<string, number> | undefined;
  /**
   * This install's labelled Services that no proof makes ours (ownership/), by `namespace/name`,
   * with the reason: an endpoint wanting that name is `unproven`, not `name-conflict`.
   */
  unproven?: ReadonlyMap<string, string> | undefined;
  /** The internal Services among them: no other URL gets a forwarder port they name. */
  unprovenInternal?: readonly Service[] | undefined;
  /** The labels of each namespace in `namespaces` (absent entry: no labels). */
  namespaceLabels?: ReadonlyMap<string, Readonly<Record<string, string>>> | undefined;
}

export interface ServiceRef {
  namespace: string;
  name: string;
}

/** One endpoint's projection result, for `/status`, metrics and Events. */
export interface EndpointStatus {
  id: string;
  url: string;
  state: ProjectionState;
  /** A sentence a person can act on; empty for `projected`. */
  reason: string;
  internalService?: ServiceRef;
  aliasService?: ServiceRef;
  /** Allocated forwarder port of this endpoint's own URL, when it has one. */
  targetPort?: number;
}

/**
 * A forwarder-port claim found wrong in the cluster and repaired by the allocator (never fatal);
 * for logging. `services` are the claiming Services as `namespace/name`.
 */
export type PortRepair =
  /** The URL's port lies outside the configured range; the URL gets a new one. */
  | { kind: 'out-of-range'; url: string; port: number; services: string[]; message: string }
  /** Two URLs claim one port: the claim of the oldest Service (`keptBy`) keeps it, `url` gets a new one. */
  | { kind: 'duplicate-port'; port: number; url: string; keptBy: string; services: string[]; message: string }
  /** One URL has several ports: the most common, then the lowest, is `kept`. */
  | { kind: 'url-two-ports'; url: string; ports: number[]; kept: number; message: string };

export interface DesiredState {
  /** Every Service that should exist, keyed `namespace/name`, fully specified (no server-defaulted fields). */
  services: Map<string, Service>;
  /** One status per endpoint given, in the order given. */
  statuses: EndpointStatus[];
  /** Canonical URL → allocated forwarder port, for every URL that has one. */
  ports: Map<string, number>;
  /** What the port allocator found wrong in the cluster's claims and repaired, for logging. */
  repairs: PortRepair[];
}

export type PlanAction =
  | { op: 'create'; key: string; desired: Service }
  /** `object` is the live Service with our fields written over it, carrying the live resourceVersion. */
  | { op: 'update'; key: string; desired: Service; object: Service }
  /** A change the server cannot apply in place (the type changed): delete with the uid precondition, then create. */
  | { op: 'recreate'; key: string; desired: Service; live: Service }
  | { op: 'delete'; key: string; live: Service };
