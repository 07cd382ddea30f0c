/**
 * Pure leader-election decisions, after client-go's `tryAcquireOrRenew`. A follower measures a
 * lease's expiry from its own *local monotonic* time of observing the record change (when the
 * response arrived), never from the server's renewTime, so neither clock skew between replicas
 * nor a step of the local wall clock matters. Wall time only fills the Lease's timestamps.
 */

export interface LeaderElectionRecord {
  /** Empty when nobody holds the lease (released). */
  holderIdentity: string;
  leaseDurationSeconds: number;
  acquireTime: string | undefined;
  renewTime: string | undefined;
  leaseTransitions: number;
}

export interface Observation {
  record: LeaderElectionRecord;
  /** Local monotonic time (ms) at which this record was first seen (response received). */
  observedAt: number;
  /** The Lease's resourceVersion when known: every write changes it, even an identical one. */
  resourceVersion?: string | undefined;
}

export type Decision =
  | { action: 'follow'; holder: string; expiresAt: number }
  | { action: 'acquire' | 'renew'; record: LeaderElectionRecord };

/** Kubernetes MicroTime: RFC 3339 with exactly six fractional digits. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/** Whole seconds as stored in a Lease (an int32 field); never below 1. */
export function toLeaseSeconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}

function sameRecord(a: LeaderElectionRecord, b: LeaderElectionRecord): boolean {
  return (
    a.holderIdentity === b.holderIdentity &&
    a.leaseDurationSeconds === b.leaseDurationSeconds &&
    a.acquireTime === b.acquireTime &&
    a.renewTime === b.renewTime &&
    a.leaseTransitions === b.leaseTransitions
  );
}

/**
 * Keeps the previous observation while the record is unchanged; otherwise stamps `now`. A new
 * resourceVersion counts as a change too, so a renewal is noticed even if its timestamps happen
 * to repeat (a wall clock stepped back): safety must not depend on wall time.
 */
export function observe(
  prev: Observation | undefined,
  record: LeaderElectionRecord,
  now: number,
  resourceVersion?: string,
): Observation {
  const sameVersion =
    prev?.resourceVersion === undefined ||
    resourceVersion === undefined ||
    prev.resourceVersion === resourceVersion;
  if (prev && sameVersion && sameRecord(prev.record, record)) return prev;
  return { record, observedAt: now, resourceVersion };
}

/** When the observed lease runs out, by our clock. */
function expiresAt(obs: Observation, fallbackDurationMs: number): number {
  const secs = obs.record.leaseDurationSeconds;
  return obs.observedAt + (secs > 0 ? secs * 1000 : fallbackDurationMs);
}

/** The record to write when `identity` takes or keeps the lease at wall time `now`. */
export function claimRecord(
  old: LeaderElectionRecord | undefined,
  identity: string,
  now: number,
  leaseDurationMs: number,
): LeaderElectionRecord {
  const ts = microTime(now);
  const renewing = old !== undefined && old.holderIdentity === identity;
  return {
    holderIdentity: identity,
    leaseDurationSeconds: toLeaseSeconds(leaseDurationMs),
    acquireTime: renewing ? (old.acquireTime ?? ts) : ts,
    renewTime: ts,
    leaseTransitions: old === undefined ? 0 : renewing ? old.leaseTransitions : old.leaseTransitions + 1,
  };
}

/**
 * Given what we observed and when, should `identity` try to write the lease now? Someone else's
 * unexpired lease means follow; our own lease means renew; an empty or expired one means acquire.
 * `now` is on the same (monotonic) clock as `obs.observedAt`; `wallNow` only stamps the record.
 */
export function decide(
  obs: Observation,
  identity: string,
  now: number,
  leaseDurationMs: number,
  wallNow: number = now,
): Decision {
  const holder = obs.record.holderIdentity;
  if (holder !== '' && holder !== identity) {
    const exp = expiresAt(obs, leaseDurationMs);
    if (now < exp) return { action: 'follow', holder, expiresAt: exp };
  }
  return {
    action: holder === identity ? 'renew' : 'acquire',
    record: claimRecord(obs.record, identity, wallNow, leaseDurationMs),
  };
}

/**
 * The record a leader writes when it steps down (`now` is wall time): no holder, 1 s duration
 * (client-go's release).
 */
export function releaseRecord(old: LeaderElectionRecord, now: number): LeaderElectionRecord {
  const ts = microTime(now);
  return {
    holderIdentity: '',
    leaseDurationSeconds: 1,
    acquireTime: ts,
    renewTime: ts,
    leaseTransitions: old.leaseTransitions,
  };
}
