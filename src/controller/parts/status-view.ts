import { staleKnowledge, type DeleteSafety } from '../../binding/delete-guard.js';
import { keyOf, type KubeTransport } from '../../kube/index.js';
import { parseHostPort } from '../../net/host-port.js';
import { startProbeServer, type ProbeResult, type ProbeServer } from '../../net/probe-server.js';
import type { ClusterState } from '../cluster.js';
import { dataPathCell, dataPathDocument } from '../decide/data-path.js';
import { decideReadiness } from '../decide/readiness.js';
import { ObservedView, convergenceGap, type ObservedStatus } from '../decide/status-observed.js';
import { stateCounts, type StatusDocument } from '../decide/status.js';
import { trackDeletingServices, type DeletingServices } from '../deleting-services.js';
import type { EndpointFeed } from '../feed.js';
import { DataPathGatherer, podForwarderSource, type ForwarderSource } from '../forwarder-health.js';
import type { Reconciler } from '../reconciler.js';
import type { Registration } from '../registration.js';
import { deleteSafetyOf, type ControllerBase } from './base.js';
import type { Leadership } from './leadership.js';

export interface StatusViewParts {
  registration: Registration;
  cluster: ClusterState;
  feed: EndpointFeed;
  reconciler: Reconciler;
  leadership: Leadership;
  dataPath: DataPathGatherer;
}

type Gap = ReturnType<typeof convergenceGap>;

/**
 * What `/readyz` and `/status` say: facts this replica observed (its caches, never the writes it
 * issued), gathered into the plain views `decide/` judges. Kept current per Service event, since
 * both are asked often.
 */
export class StatusView {
  private readonly observedView: ObservedView;
  private readonly deleting: DeletingServices;
  private gapMemo: { of: ObservedStatus[]; gap: Gap } | undefined;

  private readonly deleteSafety: DeleteSafety;

  constructor(
    private readonly base: ControllerBase,
    private readonly o: StatusViewParts,
  ) {
    const { cluster, leadership } = o;
    this.deleteSafety = deleteSafetyOf(base.config);
    this.observedView = new ObservedView(
      (ref) => cluster.services.get(ref.namespace, ref.name),
      () => leadership.isLeader(),
    );
    cluster.services.on('add', (svc) => this.observedView.serviceChanged(keyOf(svc)));
    cluster.services.on('update', (_old, svc) => this.observedView.serviceChanged(keyOf(svc)));
    cluster.services.on('delete', (svc) => this.observedView.serviceChanged(keyOf(svc)));
    this.deleting = trackDeletingServices(cluster.services);
  }

  /** Each endpoint's state as the caches show the cluster, against the last pass's plan. */
  private observed(): ObservedStatus[] {
    const { reconciler } = this.o;
    return this.observedView.current(reconciler.statuses, reconciler.plannedServices);
  }

  /** Planned projections the cluster does not show yet (memoised per observed array). */
  private observedGap(): Gap {
    const of = this.observed();
    if (this.gapMemo?.of !== of) this.gapMemo = { of, gap: convergenceGap(of) };
    return this.gapMemo.gap;
  }

  /** Why the endpoint knowledge is too old to act on (and so to be ready to lead), if it is. */
  private stale(): string | undefined {
    const snap = this.o.feed.snapshot();
    return staleKnowledge(
      {
        now: this.base.clock.now(),
        listing: snap.listing,
        streamLive: snap.streamLive,
        generation: snap.registration.generation,
      },
      this.deleteSafety.knowledgeMaxAgeMs,
    );
  }

  /** `/readyz`: ready or not, and every reason why not. */
  readiness(): ProbeResult {
    const { config } = this.base;
    const { registration, cluster, reconciler, leadership } = this.o;
    const lead = leadership.view();
    return decideReadiness({
      registered: registration.operator !== undefined,
      registrationError: registration.error,
      bindingsEnabled: config.bindings.enabled,
      cachesSynced: cluster.synced,
      unsyncedReasons: () => cluster.unsyncedReasons(),
      caughtUp: reconciler.caughtUp,
      stale: () => this.stale(),
      leader: leadership.isLeader(),
      leaseHolder: lead.holder,
      cannotLead: lead.cannotLead,
      convergenceGap: () => this.observedGap(),
    });
  }

  /** `/status`: the install, leadership, readiness, the feed's state and every endpoint. */
  status(): StatusDocument {
    const { config, identity, clock } = this.base;
    const { registration, feed, reconciler, leadership } = this.o;
    const bindings = config.bindings.enabled;
    const statuses = this.observed();
    const paths = bindings ? this.o.dataPath.snapshot : undefined;
    const now = clock.now();
    const operator = registration.operator;
    const lastFullSync = feed.lastFullSync;
    const ready = this.readiness();
    return {
      operator: operator ? { id: operator.id, ingress: operator.binding.ingress_endpoint } : null,
      install: { release: identity.release, operatorNamespace: identity.operatorNamespace },
      selector: config.bindings.endpointSelector,
      bindingsEnabled: bindings,
      leader: leadership.isLeader(),
      leadership: leadership.view(),
      ready: ready.ok,
      notReadyReasons: ready.reasons,
      notificationsLive: feed.live,
      lastFullSync: lastFullSync !== undefined ? new Date(lastFullSync).toISOString() : null,
      ...(feed.listingProgress !== undefined
        ? { listing: { listed: feed.listingProgress, total: null } }
        : {}),
      counts: stateCounts(statuses),
      deleting: this.deleting.list(),
      deletionCandidates: feed.deletionCandidates().map((c) => ({
        id: c.id,
        reason: c.reason,
        since: new Date(c.since).toISOString(),
        ...(c.lastError !== undefined ? { lastError: c.lastError } : {}),
      })),
      leftBehind: {
        count: reconciler.leftBehindAliases.length,
        aliases: reconciler.leftBehindAliases.map((a) => ({ ...a })),
      },
      ...(bindings ? { dataPath: dataPathDocument(paths) } : {}),
      endpoints: statuses.map((s) => (bindings ? { ...s, dataPath: dataPathCell(s, paths, now) } : { ...s })),
    };
  }
}

/** The start options the DATA PATH column reads (`ControllerOptions` has them). */
export interface DataPathSettings {
  /**
   * Where the forwarders are found (default: this install's forwarder pods) and how often they
   * are read (default 10 s): the demo's in-process forwarder, tests.
   */
  dataPath?: { source?: ForwarderSource; intervalMs?: number };
}

/**
 * The forwarders' data-path health, read on a timer by every replica (bindings on only: with
 * them off there is no forwarder and the chart grants no pod rights).
 */
export function dataPathFor(
  base: ControllerBase,
  settings: DataPathSettings,
  transport: KubeTransport,
): DataPathGatherer {
  const { config, clock, log, registry } = base;
  return new DataPathGatherer({
    source:
      settings.dataPath?.source ??
      podForwarderSource({ transport, namespace: config.operatorNamespace, release: config.releaseName }),
    clock,
    log: log.child({ component: 'data-path' }),
    registry,
    ...(settings.dataPath?.intervalMs !== undefined ? { intervalMs: settings.dataPath.intervalMs } : {}),
  });
}

/** `/healthz`, `/readyz`, `/metrics` and `/status` on `http.listen`, answered from `view`. */
export async function serveStatus(base: ControllerBase, view: StatusView): Promise<ProbeServer> {
  const { config, registry, log } = base;
  const listenAt = parseHostPort(config.http.listen, { allowZero: true, allowEmptyHost: true });
  const probe = await startProbeServer({
    host: listenAt.host || '0.0.0.0',
    port: listenAt.port,
    registry,
    ready: () => view.readiness(),
    json: { '/status': () => view.status() },
  });
  log.info({ url: probe.url }, 'controller http server listening');
  return probe;
}
