import {
  leftBehindAliases,
  namedAliases,
  relabelledLeftBehind,
  ROLE_ALIAS,
  ROLE_LABEL,
  type LeftBehindAlias,
} from '../binding/ownership/index.js';
import { describeError, isConflict, keyOf, type Service } from '../kube/index.js';
import type { Logger } from '../log/logger.js';
import type { ApplyOutcome, ServiceApi } from './apply.js';
import { ReportedOnce } from './decide/reported-once.js';

/** A proven alias uid is remembered this long after it was last seen in any cache. */
const FORGET_AFTER_MS = 10 * 60_000;

/**
 * The shell around binding/ownership/left-behind.ts: remembers which alias uids this install provably
 * created (so a proof survives its internal Service's delete within this process), keeps the
 * list `/status` shows, and as leader relabels the provable lost-label aliases, one replace each
 * with the observed resourceVersion as precondition.
 */
export class LeftBehindAliases {
  private proven = new Map<string, number>();
  /** uid → the resourceVersion this process replaced (the cache may still show that object). */
  private readonly relabelled = new Map<string, string>();
  /**
   * uid → the resourceVersion whose relabel was refused (not a Conflict: a fence that forbids
   * writing a Service without our managed-by label, RBAC), and why; not tried again until it changes.
   */
  private readonly refused = new Map<string, { rv: string; error: string }>();
  private current: LeftBehindAlias[] = [];
  private readonly reported: ReportedOnce<LeftBehindAlias>;

  constructor(private readonly log: Logger) {
    this.reported = new ReportedOnce((key, a) =>
      log.warn({ service: key, reason: a.reason }, 'alias left behind; listed in /status'),
    );
  }

  get list(): readonly LeftBehindAlias[] {
    return this.current;
  }

  async afterPass(p: {
    now: number;
    leader: boolean;
    isLeader: () => boolean;
    operatorNamespace: string;
    trusted: readonly Service[];
    unanchored: readonly Service[];
    lostLabel: readonly Service[];
    outcomes: readonly ApplyOutcome[];
    api: ServiceApi;
    signal: AbortSignal;
    onWrite: (result: string) => void;
  }): Promise<void> {
    this.remember(p);
    const found = leftBehindAliases({
      lostLabel: p.lostLabel,
      unanchored: p.unanchored,
      provenAliasUids: new Set(this.proven.keys()),
      operatorNamespace: p.operatorNamespace,
    });
    this.current = found.aliases.map((a) => {
      const svc = p.lostLabel.find((s) => s.metadata.namespace === a.namespace && s.metadata.name === a.name);
      const no = svc?.metadata.uid !== undefined ? this.refused.get(svc.metadata.uid) : undefined;
      return no ? { ...a, reason: `${a.reason}; its state label could not be changed: ${no.error}` } : a;
    });
    this.reported.seen(found.aliases.map((a) => [`${a.namespace}/${a.name}`, a] as const));
    if (!p.leader) return;
    for (const svc of found.relabel) {
      const uid = svc.metadata.uid!;
      // The cache still shows the object this process replaced: the write is done.
      if (this.relabelled.get(uid) === svc.metadata.resourceVersion) continue;
      if (this.refused.get(uid)?.rv === svc.metadata.resourceVersion) continue;
      if (p.signal.aborted || !p.isLeader()) return;
      try {
        await p.api.replace(relabelledLeftBehind(svc), p.signal);
        this.relabelled.set(uid, svc.metadata.resourceVersion ?? '');
        p.onWrite('ok');
        this.log.info({ service: keyOf(svc), uid }, 'left-behind alias relabelled');
      } catch (err) {
        // A Conflict: it changed since we saw it; the watch brings the new object and a pass.
        // Anything else is not retried for this version of the object (a refusal stays one).
        const conflict = isConflict(err);
        p.onWrite(conflict ? 'conflict' : 'error');
        const error = describeError(err);
        if (!conflict) this.refused.set(uid, { rv: svc.metadata.resourceVersion ?? '', error: error.err });
        this.log.warn({ service: keyOf(svc), error }, 'left-behind alias not relabelled');
      }
    }
  }

  /** Alias uids proven ours now: recorded on a proven internal Service, trusted, or just written. */
  private remember(p: {
    now: number;
    operatorNamespace: string;
    trusted: readonly Service[];
    lostLabel: readonly Service[];
    outcomes: readonly ApplyOutcome[];
  }): void {
    const seen = new Set<string>();
    for (const uids of namedAliases(p.trusted, p.operatorNamespace).values())
      for (const uid of uids) seen.add(uid);
    const alias = (s: Service): boolean =>
      s.metadata.namespace !== p.operatorNamespace && s.metadata.labels?.[ROLE_LABEL] === ROLE_ALIAS;
    for (const s of p.trusted) if (alias(s) && s.metadata.uid) seen.add(s.metadata.uid);
    for (const out of p.outcomes)
      if (
        (out.result === 'created' || out.result === 'updated') &&
        alias(out.object) &&
        out.object.metadata.uid
      )
        seen.add(out.object.metadata.uid);
    for (const uid of seen) this.proven.set(uid, p.now);
    // Still seen in a cache (left behind): remembered as long as it stays.
    for (const s of p.lostLabel)
      if (s.metadata.uid && this.proven.has(s.metadata.uid)) this.proven.set(s.metadata.uid, p.now);
    for (const [uid, at] of this.proven) if (p.now - at > FORGET_AFTER_MS) this.proven.delete(uid);
    const live = new Set(p.lostLabel.map((s) => s.metadata.uid));
    for (const uid of this.relabelled.keys()) if (!live.has(uid)) this.relabelled.delete(uid);
    for (const uid of this.refused.keys()) if (!live.has(uid)) this.refused.delete(uid);
  }
}
