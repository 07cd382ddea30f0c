import type { Service } from '../kube/objects.js';
import type { PlanAction } from './types.js';

/**
 * When a delete stands (docs/controller.md "Deletion"), and how fresh a replica's endpoint
 * knowledge is (its readiness). Pure: every fact is passed in.
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
  /** A replica whose endpoint knowledge is older than this is not ready. */
  knowledgeMaxAgeMs: number;
}

export const DEFAULT_DELETE_SAFETY: DeleteSafety = { knowledgeMaxAgeMs: 180_000 };

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

/**
 * Which of a plan's deletes stand (docs/controller.md "Deletion"): a delete removes a live
 * projection, so it must follow from a fact about the endpoints it serves, each one:
 *  - the namespace policy closes the namespace of the alias, or the one an internal Service's
 *    endpoint URL names (a cluster fact: no API needed);
 *  - the endpoint is held (known to exist), so the delete follows from what this replica decided
 *    itself: the selector, a URL change, a conflict;
 *  - the endpoint is proven gone (`GET /endpoints/{id}` answered the API's own not-found).
 * Any other id (known to be missing from a listing, or never seen) proves nothing: the delete
 * waits and the id is nominated for its proof. Pure.
 */
export interface DeleteProofFacts {
  operatorNamespace: string;
  /** Ids of the endpoints the feed holds. */
  held: ReadonlySet<string>;
  /** Ids proven gone. */
  provenGone: ReadonlySet<string>;
  /**
   * The held endpoints are current (the notification stream live, or a recent listing): a
   * deselection decided on stale knowledge could undo a newer change, so it waits.
   */
  fresh: boolean;
  /** The endpoint ids a Service serves (its annotations). */
  servedIds: (svc: Service) => readonly string[];
  /** Why the policy closes a namespace to aliases, or undefined when it is open. */
  closedNamespace: (namespace: string) => string | undefined;
  /**
   * The namespace whose policy governs a Service: an alias's own; an internal Service's, the one
   * its endpoint URL names (a namespace-denied endpoint has none).
   */
  policyNamespace: (svc: Service) => string | undefined;
}

export interface ProvenDeletes {
  /** The plan with only the deletes that stand. */
  actions: PlanAction[];
  /** Deletes held back, by Service key, with the ids still to prove. */
  held: Map<string, readonly string[]>;
  /** Ids to nominate for their proof. */
  nominate: string[];
}

export function provenDeletes(actions: readonly PlanAction[], f: DeleteProofFacts): ProvenDeletes {
  const kept: PlanAction[] = [];
  const held = new Map<string, readonly string[]>();
  const nominate = new Set<string>();
  for (const a of actions) {
    if (a.op !== 'delete') {
      kept.push(a);
      continue;
    }
    const ns = f.policyNamespace(a.live);
    if (ns !== undefined && ns !== f.operatorNamespace && f.closedNamespace(ns) !== undefined) {
      kept.push(a);
      continue;
    }
    const ids = f.servedIds(a.live);
    const unproven = ids.filter((id) => !f.held.has(id) && !f.provenGone.has(id));
    const stale = f.fresh ? [] : ids.filter((id) => f.held.has(id));
    if (unproven.length === 0 && stale.length === 0) kept.push(a);
    else {
      held.set(a.key, [...unproven, ...stale]);
      for (const id of unproven) nominate.add(id);
    }
  }
  return { actions: kept, held, nominate: [...nominate] };
}
