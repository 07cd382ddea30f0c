/**
 * `/readyz` and the `ready`/`notReadyReasons` of `/status`: whether this replica is ready, and
 * every reason it is not, decided from what the controller observed. Pure: the shell hands in a
 * plain view and answers what it says.
 *
 * The ladder, in the order its reasons are listed: registered with the management API; the
 * caches synced (bindings on); a complete sync of the endpoints applied or computed; the
 * knowledge of the endpoint set not stale; nothing stopping this replica from leading; and, on
 * a leader that has caught up, every planned projection observed in the cluster. A follower is
 * ready without the last rung: it writes nothing, so it has nothing to wait for.
 */

/** What the readiness decision reads. The costly facts are functions asked only when a rung needs them. */
export interface ReadinessView {
  /** The operator record is known (registered or adopted). */
  registered: boolean;
  /** The last registration attempt's failure, if it failed. */
  registrationError: string | undefined;
  bindingsEnabled: boolean;
  cachesSynced: boolean;
  /** Which caches have not synced and why; asked only when they have not. */
  unsyncedReasons: () => readonly string[];
  /** A complete sync of the endpoints was applied (leader) or computed (follower). */
  caughtUp: boolean;
  /** Why what is known of the endpoint set is too old to act on; asked only once caught up. */
  stale: () => string | undefined;
  leader: boolean;
  /** The Lease holder as last observed (status-leader.ts). */
  leaseHolder: string | null;
  /** Why this replica cannot lead (status-leader.ts); empty when nothing stops it. */
  cannotLead: readonly string[];
  /** Planned projections the cluster does not show yet; asked only on a leader that caught up. */
  convergenceGap: () => { pending: number; example?: string };
}

export interface Readiness {
  ok: boolean;
  reasons: string[];
  /** The facts beside the verdict in the `/readyz` body. */
  detail: {
    registered: boolean;
    registrationError?: string;
    cachesSynced: boolean;
    leader: boolean;
    leaseHolder: string | null;
    caughtUp: boolean;
    pending: number;
  };
}

type Gap = ReturnType<ReadinessView['convergenceGap']>;
/** One rung: the reasons it finds this replica not ready (none when it passes). */
type Rung = (v: ReadinessView, gap: Gap) => string[];

const registration: Rung = (v) => {
  if (v.registered) return [];
  return [
    v.registrationError
      ? `not registered with the management API: ${v.registrationError}`
      : 'not registered with the management API yet',
  ];
};

const cachesSynced: Rung = (v) =>
  v.bindingsEnabled && !v.cachesSynced
    ? [
        `caches of Services, Namespaces and the install record not synced yet (${v.unsyncedReasons().join('; ')})`,
      ]
    : [];

const firstSync: Rung = (v) =>
  v.bindingsEnabled && !v.caughtUp
    ? ['no complete sync of the endpoints applied (leader) or computed (follower) yet']
    : [];

const freshKnowledge: Rung = (v) => {
  if (!v.bindingsEnabled || !v.caughtUp) return [];
  const reason = v.stale();
  return reason ? [reason] : [];
};

const ableToLead: Rung = (v) => (v.bindingsEnabled ? v.cannotLead.map((r) => `cannot lead: ${r}`) : []);

// A leader is ready when the cluster holds what it planned (differences are reported error states).
const converged: Rung = (_v, gap) =>
  gap.pending > 0
    ? [`${gap.pending} endpoints planned but not yet observed in the cluster (e.g. ${gap.example ?? ''})`]
    : [];

/** The rungs in the order their reasons are listed. */
const LADDER: readonly Rung[] = [
  registration,
  cachesSynced,
  firstSync,
  freshKnowledge,
  ableToLead,
  converged,
];

export function decideReadiness(v: ReadinessView): Readiness {
  const gap: Gap = v.bindingsEnabled && v.leader && v.caughtUp ? v.convergenceGap() : { pending: 0 };
  const reasons = LADDER.flatMap((rung) => rung(v, gap));
  return {
    ok: reasons.length === 0,
    reasons,
    detail: {
      registered: v.registered,
      ...(v.registrationError ? { registrationError: v.registrationError } : {}),
      cachesSynced: v.cachesSynced,
      leader: v.leader,
      leaseHolder: v.leaseHolder,
      caughtUp: v.caughtUp,
      pending: gap.pending,
    },
  };
}
