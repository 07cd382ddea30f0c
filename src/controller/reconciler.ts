import {
  ENDPOINT_ID_ANNOTATION,
  ENDPOINT_IDS_ANNOTATION,
  ROLE_ALIAS,
  ROLE_INTERNAL,
  ROLE_LABEL,
} from '../binding/identity.js';
import { plan } from '../binding/plan.js';
import { project } from '../binding/project.js';
import type { EndpointSelector } from '../binding/selector.js';
import type {
  EndpointRecord,
  EndpointStatus,
  PlanAction,
  ProjectionConfig,
  ProjectionState,
} from '../binding/types.js';
import { PROJECTION_STATES } from '../binding/types.js';
import {
  kinds,
  objectRef,
  type EventRecorder,
  type InvolvedObject,
  type KubeClient,
  type Service,
} from '../kube/index.js';
import { isOwnedBy } from '../binding/identity.js';
import type { Logger } from '../log/logger.js';
import { applyAll, type ApplyOutcome } from './apply.js';
import type { ClusterState } from './cluster.js';
import type { EndpointFeed } from './feed.js';
import type { ControllerMetrics } from './metrics.js';
import { TokenBucket } from './token-bucket.js';

export interface ReconcilerOptions {
  feed: EndpointFeed;
  cluster: ClusterState;
  client: KubeClient;
  selector: EndpointSelector;
  /** The projection settings; `ingressAddress` is read on every pass (it follows the registration). */
  config: () => ProjectionConfig;
  isLeader: () => boolean;
  writeConcurrency: number;
  log: Logger;
  metrics: ControllerMetrics;
  recorder?: EventRecorder;
  /** Where events about endpoints without a Service of their own go (the controller's Pod). */
  podRef?: InvolvedObject;
  random?: () => number;
  now?: () => number;
  /** Passes run at most this often when changes keep coming; 10 ms. */
  coalesceMs?: number;
  /** Called once, when the first pass over a complete listing is done. */
  onCaughtUp?: () => void;
}

interface Backoff {
  until: number;
  failures: number;
  message: string;
}

const EVENT_REASON: Partial<Record<ProjectionState, string>> = {
  'namespace-missing': 'NamespaceMissing',
  'name-conflict': 'NameConflict',
  'port-conflict': 'PortConflict',
  'invalid-url': 'InvalidURL',
  'ports-exhausted': 'PortsExhausted',
  error: 'WriteFailed',
};

/** The endpoints a Service serves, from the annotations the projection wrote. */
function endpointIdsOf(svc: Service): string[] {
  const a = svc.metadata.annotations ?? {};
  const one = a[ENDPOINT_ID_ANNOTATION];
  if (one) return [one];
  try {
    const many: unknown = JSON.parse(a[ENDPOINT_IDS_ANNOTATION] ?? '[]');
    return Array.isArray(many) ? many.filter((x): x is string => typeof x === 'string') : [];
  } catch {
    return [];
  }
}

/**
 * One loop that turns "something changed" into passes: read the world (feed + cluster caches),
 * project and plan (pure), apply what differs (leader only), then record statuses, metrics and
 * events. Passes never overlap; changes during a pass cause another one.
 */
export class Reconciler {
  private dirty = true;
  private wake: (() => void) | undefined;
  private readonly backoff = new Map<string, Backoff>();
  private readonly lastApplied = new Map<string, string>();
  private readonly prevState = new Map<string, ProjectionState>();
  private portHints = new Map<string, number>();
  private current: EndpointStatus[] = [];
  private passes = 0;
  /** Normal write Events: a burst of 50, then 10 a second (Warnings are never limited). */
  private readonly normalEvents = new TokenBucket(50, 10);
  private suppressedEvents = 0;
  private appliedComplete = false;
  private readonly now: () => number;
  private readonly random: () => number;

  constructor(private readonly o: ReconcilerOptions) {
    this.now = o.now ?? Date.now;
    this.random = o.random ?? Math.random;
  }

  /** Marks the world changed; a pass follows soon. */
  trigger(): void {
    this.dirty = true;
    this.wake?.();
  }

  get statuses(): readonly EndpointStatus[] {
    return this.current;
  }

  /** True once a pass over a complete listing and synced caches has been applied (leader) or computed (follower). */
  get caughtUp(): boolean {
    return this.appliedComplete;
  }

  get passCount(): number {
    return this.passes;
  }

  async run(signal: AbortSignal): Promise<void> {
    const coalesce = this.o.coalesceMs ?? 10;
    while (!signal.aborted) {
      if (!this.dirty) await this.sleepUntilNeeded(signal);
      if (signal.aborted) return;
      await new Promise((r) => setTimeout(r, coalesce));
      this.dirty = false;
      try {
        await this.pass(signal);
      } catch (err) {
        this.o.log.error({ error: err instanceof Error ? err.stack : String(err) }, 'reconcile pass failed');
        this.dirty = true;
        await new Promise((r) => setTimeout(r, 1_000));
      }
    }
  }

  private sleepUntilNeeded(signal: AbortSignal): Promise<void> {
    const now = this.now();
    let due: number | undefined = this.o.cluster.nextForeignCheck();
    for (const b of this.backoff.values()) due = due === undefined ? b.until : Math.min(due, b.until);
    return new Promise<void>((resolve) => {
      const done = (): void => {
        if (timer) clearTimeout(timer);
        signal.removeEventListener('abort', done);
        this.wake = undefined;
        resolve();
      };
      const timer =
        due === undefined
          ? undefined
          : setTimeout(
              () => {
                this.dirty = true;
                done();
              },
              Math.max(0, due - now),
            );
      this.wake = done;
      signal.addEventListener('abort', done, { once: true });
    });
  }

  /** Asks again about foreign Services whose recheck is due: gone or now ours clears the mark. */
  private async recheckForeign(signal: AbortSignal): Promise<void> {
    for (const key of this.o.cluster.foreignDue(this.now())) {
      const [ns, name] = key.split('/') as [string, string];
      try {
        const live = await this.o.client.get(kinds.service, ns, name, { signal });
        const identity = this.o.config().identity;
        if (!live || isOwnedBy(live, identity)) this.o.cluster.clearForeign(key);
        else this.o.cluster.markForeign(key, this.now());
      } catch {
        this.o.cluster.markForeign(key, this.now());
      }
    }
  }

  private async pass(signal: AbortSignal): Promise<void> {
    const { feed, cluster, log, metrics } = this.o;
    if (!cluster.synced) return;
    await this.recheckForeign(signal);
    const now = this.now();
    const view = cluster.view(now);
    const endpoints: EndpointRecord[] = feed.endpoints();
    const t0 = performance.now();
    const selector = this.o.selector;
    const desired = project({
      endpoints,
      select: (v) => selector.evaluate(v),
      cluster: view,
      config: this.o.config(),
      random: this.random,
      portHints: this.portHints,
    });
    const frozen = new Set([...view.namespaces].filter(([, p]) => p === 'Terminating').map(([n]) => n));
    const actions = plan(desired.services, view.ownedByKey, {
      allowDeletes: feed.complete,
      frozenNamespaces: frozen,
    });
    const planMs = performance.now() - t0;
    metrics.planDuration.observe(planMs / 1000);
    this.passes++;

    const ready = actions.filter((a) => (this.backoff.get(a.key)?.until ?? 0) <= now);
    const leader = this.o.isLeader();
    let outcomes: ApplyOutcome[] = [];
    let applyMs = 0;
    if (leader && ready.length > 0) {
      const t1 = performance.now();
      outcomes = await applyAll(
        ready,
        {
          client: this.o.client,
          cluster,
          identity: this.o.config().identity,
          isLeader: this.o.isLeader,
          metrics,
          now: this.now,
          signal,
        },
        this.o.writeConcurrency,
      );
      applyMs = performance.now() - t1;
      metrics.applyDuration.observe(applyMs / 1000);
      this.recordOutcomes(ready, outcomes);
    }

    const failed = new Map<string, string>();
    for (const [key, b] of this.backoff) {
      const svc = desired.services.get(key);
      if (svc) for (const id of endpointIdsOf(svc)) failed.set(id, b.message);
    }
    const statuses = desired.statuses.map((s): EndpointStatus => {
      const msg = failed.get(s.id);
      return msg === undefined ? s : { ...s, state: 'error', reason: `writing its Services failed: ${msg}` };
    });
    this.current = statuses;
    this.portHints = desired.ports;
    for (const r of desired.repairs)
      log.warn({ kind: r.kind, url: r.url, detail: r.message }, 'forwarder port repaired');
    this.updateMetrics(statuses, desired.services, actions, outcomes);
    this.emitStateEvents(statuses, desired.services);

    const clean = outcomes.every((o) => o.result === 'ok');
    if (outcomes.some((o) => o.result === 'foreign' || o.result === 'ok')) this.dirty = true;
    if (feed.complete && !this.appliedComplete) {
      this.appliedComplete = true;
      this.o.onCaughtUp?.();
      log.info(
        { endpoints: endpoints.length, services: desired.services.size, leader },
        'first complete sync applied',
      );
    }
    if (leader && clean) metrics.lastApply.set(this.now() / 1000);
    if (actions.length > 0 || outcomes.length > 0) {
      log.info(
        {
          endpoints: endpoints.length,
          desired: desired.services.size,
          actions: actions.length,
          applied: outcomes.filter((o) => o.result === 'ok').length,
          failed: outcomes.filter((o) => o.result === 'error').length,
          deferred: actions.length - ready.length,
          planMs: Math.round(planMs),
          applyMs: Math.round(applyMs),
          normalEventsSuppressedTotal: this.suppressedEvents,
          leader,
        },
        'reconcile pass',
      );
    }
  }

  private recordOutcomes(actions: readonly PlanAction[], outcomes: readonly ApplyOutcome[]): void {
    const { log, recorder } = this.o;
    outcomes.forEach((out, i) => {
      const action = actions[i]!;
      if (out.result === 'ok') {
        this.backoff.delete(out.key);
        const desiredJson = action.op === 'delete' ? undefined : JSON.stringify(action.desired);
        const repaired = desiredJson !== undefined && this.lastApplied.get(out.key) === desiredJson;
        if (desiredJson === undefined) this.lastApplied.delete(out.key);
        else this.lastApplied.set(out.key, desiredJson);
        const verb =
          action.op === 'delete'
            ? 'Deleted'
            : repaired
              ? 'Repaired'
              : action.op === 'update'
                ? 'Updated'
                : 'Created';
        const svc = out.object ?? (action.op === 'delete' ? action.live : undefined);
        log.info(
          { service: out.key, op: action.op, repaired, endpoints: svc ? endpointIdsOf(svc) : [] },
          `service ${verb.toLowerCase()}`,
        );
        if (svc && recorder && this.normalEvents.take()) {
          const role = svc.metadata.labels?.[ROLE_LABEL] ?? 'service';
          const ids = endpointIdsOf(svc).join(', ');
          const what =
            verb === 'Repaired'
              ? `Restored ${role} Service ${out.key} after it was changed or deleted outside endpoint-binder`
              : `${verb} ${role} Service ${out.key}`;
          recorder.normal(objectRef(svc, 'Service', 'v1'), verb, ids ? `${what} (endpoint ${ids})` : what);
        } else if (svc && recorder) {
          this.suppressedEvents++;
        }
      } else if (out.result === 'error') {
        const prev = this.backoff.get(out.key);
        const failures = (prev?.failures ?? 0) + 1;
        const delay = Math.min(300_000, 500 * 2 ** (failures - 1)) * (0.75 + this.random() * 0.5);
        this.backoff.set(out.key, { until: this.now() + delay, failures, message: out.message });
        log.warn(
          { service: out.key, op: action.op, failures, retryInMs: Math.round(delay), error: out.message },
          'service write failed',
        );
        const target = action.op === 'delete' ? action.live : action.desired;
        recorder?.warning(
          objectRef(target, 'Service', 'v1'),
          'WriteFailed',
          `Could not ${action.op} Service ${out.key}: ${out.message}`,
        );
      } else if (out.result === 'foreign') {
        log.warn(
          { service: out.key },
          'service name held by a Service this install does not own; left untouched',
        );
      }
    });
  }

  private emitStateEvents(statuses: readonly EndpointStatus[], services: ReadonlyMap<string, Service>): void {
    const seen = new Set<string>();
    for (const s of statuses) {
      seen.add(s.id);
      const prev = this.prevState.get(s.id);
      if (prev === s.state) continue;
      this.prevState.set(s.id, s.state);
      this.o.log.info(
        { endpointId: s.id, url: s.url, state: s.state, previous: prev ?? null, reason: s.reason },
        'endpoint state',
      );
      const reason = EVENT_REASON[s.state];
      if (!this.o.recorder) continue;
      const internal = s.internalService
        ? services.get(`${s.internalService.namespace}/${s.internalService.name}`)
        : undefined;
      const target = internal ? objectRef(internal, 'Service', 'v1') : this.o.podRef;
      if (!target) continue;
      if (reason) this.o.recorder.warning(target, reason, `Endpoint ${s.id} (${s.url}): ${s.reason}`);
      else if (s.state === 'projected' && prev !== undefined) {
        this.o.recorder.normal(target, 'Projected', `Endpoint ${s.id} (${s.url}) is projected`);
      }
    }
    for (const id of this.prevState.keys()) if (!seen.has(id)) this.prevState.delete(id);
  }

  private updateMetrics(
    statuses: readonly EndpointStatus[],
    desired: ReadonlyMap<string, Service>,
    actions: readonly PlanAction[],
    outcomes: readonly ApplyOutcome[],
  ): void {
    const m = this.o.metrics;
    const counts = new Map<ProjectionState, number>(PROJECTION_STATES.map((s) => [s, 0]));
    for (const s of statuses) counts.set(s.state, (counts.get(s.state) ?? 0) + 1);
    for (const [state, n] of counts) m.endpoints.set({ state }, n);
    const outstanding = new Set(actions.map((a) => a.key));
    for (const o of outcomes) if (o.result === 'ok') outstanding.delete(o.key);
    for (const role of [ROLE_INTERNAL, ROLE_ALIAS]) {
      let want = 0;
      let applied = 0;
      for (const [key, svc] of desired) {
        if (svc.metadata.labels?.[ROLE_LABEL] !== role) continue;
        want++;
        if (!outstanding.has(key)) applied++;
      }
      m.servicesDesired.set({ role }, want);
      m.servicesApplied.set({ role }, applied);
    }
  }
}
