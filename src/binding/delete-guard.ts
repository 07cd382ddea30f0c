/**
 * When a replica may delete (docs/controller.md "Deletion rules"). Pure: every fact is passed in.
 *
 * A delete removes a live projection on the strength of an absence, so it needs knowledge that
 * is whole (a complete listing), current (read under the registration held now, in this
 * leadership term, not older than the freshness bound) and not contradicted (a listing that
 * would delete a large share of the install is confirmed by a second one first).
 */

/** The last complete listing of the account's endpoints, as the feed took it. */
export interface ListingFacts {
  /** Complete listings so far (1 for the first); a later one has a larger number. */
  seq: number;
  startedAt: number;
  finishedAt: number;
  /** The registration generation the listing was read under. */
  generation: number;
}

export interface KnowledgeFacts {
  now: number;
  listing: ListingFacts | undefined;
  /** The notification stream is connected and has been since the listing (no gap). */
  streamLive: boolean;
  /** The registration generation held now. */
  generation: number;
}

export interface DeleteSafety {
  /** Knowledge older than this may not delete, and a follower holding it is not ready. */
  knowledgeMaxAgeMs: number;
  /** A plan deleting more than this share of the install's Services … */
  massDeleteShare: number;
  /** … and at least this many is confirmed by a second complete listing first. */
  massDeleteMin: number;
  /** The confirming listing starts at least this long after the one that showed the deletes. */
  massDeleteConfirmDelayMs: number;
}

export const DEFAULT_DELETE_SAFETY: DeleteSafety = {
  knowledgeMaxAgeMs: 180_000,
  massDeleteShare: 0.2,
  massDeleteMin: 10,
  massDeleteConfirmDelayMs: 5_000,
};

/**
 * How old this replica's knowledge of the endpoint set is: 0 while the notification stream is
 * live (it carries every change since the listing), else the age of the last complete listing;
 * undefined with no usable listing (none yet, or one read under an older registration).
 */
export function knowledgeAge(k: KnowledgeFacts): number | undefined {
  if (!k.listing || k.listing.generation !== k.generation) return undefined;
  return k.streamLive ? 0 : Math.max(0, k.now - k.listing.finishedAt);
}

/** Why knowledge is not fresh enough to act on (a readiness reason), or undefined when it is. */
export function staleKnowledge(k: KnowledgeFacts, maxAgeMs: number): string | undefined {
  if (!k.listing) return 'no complete listing of the endpoints yet';
  if (k.listing.generation !== k.generation) {
    return 'the operator registration changed since the last complete listing; waiting for a listing under the new one';
  }
  const age = knowledgeAge(k) ?? 0;
  if (age > maxAgeMs) {
    const s = Math.round(age / 1000);
    return `endpoint knowledge is ${s} s old (notifications down, last complete listing ${s} s ago; bound ${Math.round(maxAgeMs / 1000)} s)`;
  }
  return undefined;
}

/** A mass delete seen and waiting for its confirming listing (the reconciler remembers it). */
export interface PendingConfirmation {
  /** The listing that showed it. */
  seq: number;
  detectedAt: number;
}

export interface DeleteFacts extends KnowledgeFacts {
  /** When this replica's current leadership term began (the start of the process without election). */
  termStartedAt: number;
  /** Deletes the plan holds. */
  deletes: number;
  /** This install's Services now. */
  projections: number;
  pending: PendingConfirmation | undefined;
}

export type DeleteVerdict =
  | { allow: true; confirmed: boolean }
  | {
      allow: false;
      reason: 'no-listing' | 'registration-changed' | 'before-term' | 'stale' | 'mass-delete';
      message: string;
      /** Set for `mass-delete`: what to remember while the confirming listing is awaited. */
      pending?: PendingConfirmation;
    };

export function isMassDelete(deletes: number, projections: number, s: DeleteSafety): boolean {
  return deletes >= s.massDeleteMin && deletes > s.massDeleteShare * projections;
}

/** May this pass delete? Only the first failing rule is named. */
export function decideDeletes(f: DeleteFacts, s: DeleteSafety): DeleteVerdict {
  if (f.deletes === 0) return { allow: true, confirmed: false };
  const l = f.listing;
  if (!l) return { allow: false, reason: 'no-listing', message: 'no complete listing yet' };
  if (l.generation !== f.generation) {
    return {
      allow: false,
      reason: 'registration-changed',
      message: 'the last complete listing was read under an earlier registration',
    };
  }
  if (l.startedAt < f.termStartedAt) {
    return {
      allow: false,
      reason: 'before-term',
      message: 'the last complete listing predates this leadership term; deletes wait for one of its own',
    };
  }
  const stale = staleKnowledge(f, s.knowledgeMaxAgeMs);
  if (stale) return { allow: false, reason: 'stale', message: stale };
  if (!isMassDelete(f.deletes, f.projections, s)) return { allow: true, confirmed: false };
  const p = f.pending;
  if (p && l.seq > p.seq && l.startedAt >= p.detectedAt + s.massDeleteConfirmDelayMs) {
    return { allow: true, confirmed: true };
  }
  return {
    allow: false,
    reason: 'mass-delete',
    message: `${f.deletes} of ${f.projections} Services would be deleted; waiting for a second complete listing to confirm`,
    pending: p ?? { seq: l.seq, detectedAt: f.now },
  };
}
