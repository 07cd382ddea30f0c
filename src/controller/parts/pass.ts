import type { InstallIdentity } from '../../binding/identity.js';
import type { EndpointSelector } from '../../binding/selector.js';
import type { ProjectionConfig } from '../../binding/types.js';
import { collectionPath, kinds, listAll } from '../../kube/index.js';
import type { Latch } from '../../time/latch.js';
import type { Notice } from '../../time/notice.js';
import { serviceApi } from '../apply.js';
import type { ControllerConfig } from '../config.js';
import { eventKey } from '../decide/reporting.js';
import type { EndpointFeed } from '../feed.js';
import type { InstallRecordWriter } from '../install-record-writer.js';
import { Reconciler } from '../reconciler.js';
import type { Registration } from '../registration.js';
import { deleteSafetyOf, type ControllerBase } from './base.js';
import type { KubeSide } from './kube-side.js';
import type { Leadership } from './leadership.js';

/** The start options the pass reads (`ControllerOptions` has them). */
export interface PassSettings {
  /** How many internal Services the install record lists at most (tests lower it). */
  recordCapacity?: number;
  /** Creates per pass at most (tests lower it). */
  intentsPerPass?: number;
}

export interface PassParts extends Pick<KubeSide, 'transport' | 'kube' | 'recorder' | 'podRef' | 'cluster'> {
  selector: EndpointSelector;
  feed: EndpointFeed;
  installRecord: InstallRecordWriter;
  leadership: Leadership;
  /** Resolved once, when the first pass over a complete listing is done. */
  caughtUp: Latch;
  /** Told after a complete listing that changed nothing. */
  unchangedListing: Notice;
}

/** The projection settings every pass reads. */
function projectionConfig(config: ControllerConfig, identity: InstallIdentity): ProjectionConfig {
  return {
    identity,
    clusterDomain: config.bindings.clusterDomain,
    portRange: config.bindings.portRange,
    serviceLabels: config.bindings.serviceLabels,
    serviceAnnotations: config.bindings.serviceAnnotations,
    namespacePolicy: config.bindings.namespaces,
    groupLimits: config.bindings.limits,
  };
}

/**
 * The reconcile pass, built from the sources it reads (feed, caches, leadership) and the writers
 * it uses. It also subscribes to what asks for a pass beside the queue's own sources: a complete
 * listing that changed nothing passes again only when the reconciler waits for one (a resync of
 * 10,000 unchanged endpoints plans nothing).
 */
export function reconcilerFor(base: ControllerBase, settings: PassSettings, parts: PassParts): Reconciler {
  const { config, identity, queue, clock } = base;
  const { transport, leadership } = parts;
  // One value for the life of the process: the reconciler reads it on every pass.
  const deleteSafety = deleteSafetyOf(config);
  const reconciler = new Reconciler({
    foreignNameGraceMs: config.bindings.foreignNameGraceSeconds * 1000,
    feed: parts.feed,
    cluster: parts.cluster,
    queue,
    api: serviceApi(parts.kube),
    listServices: async (namespace, sig) =>
      (
        await listAll({
          transport,
          path: collectionPath(kinds.service, namespace),
          schema: kinds.service.schema,
          signal: sig,
        })
      ).items,
    selector: parts.selector,
    config: () => projectionConfig(config, identity),
    isLeader: () => leadership.isLeader(),
    termStartedAt: () => leadership.leaderTermStart(),
    deleteSafety: () => deleteSafety,
    portReservationMs: config.bindings.portReservationSeconds * 1000,
    writeConcurrency: config.writeConcurrency,
    log: base.log.child({ component: 'reconciler' }),
    metrics: base.metrics,
    recorder: parts.recorder,
    clock,
    ...(parts.podRef ? { podRef: parts.podRef } : {}),
    onCaughtUp: () => parts.caughtUp.resolve(),
    internalRecord: parts.installRecord,
    ...(settings.recordCapacity !== undefined ? { recordCapacity: settings.recordCapacity } : {}),
    ...(settings.intentsPerPass !== undefined ? { intentsPerPass: settings.intentsPerPass } : {}),
    reportedEvents: async (sig) => {
      const { items } = await listAll({
        transport,
        path: collectionPath(kinds.event, identity.operatorNamespace),
        schema: kinds.event.schema,
        signal: sig,
      });
      return new Set(items.map((e) => eventKey(e.reason ?? '', e.message ?? '')));
    },
  });
  parts.unchangedListing.subscribe(() => {
    if (reconciler.awaitsListing) queue.requestPass();
  });
  return reconciler;
}

/**
 * A new leader lists the account at once (its listing nominates what it lacks for a proof), or,
 * when the first sync is still to be applied, right after it: listing thousands of endpoints
 * beside its projection on the one event loop slows both. The listing is given up when the term
 * it was started for ends.
 */
export function listWhenLeading(
  base: ControllerBase,
  o: {
    leadership: Leadership;
    registration: Registration;
    feed: EndpointFeed;
    reconciler: { readonly caughtUp: boolean };
    caughtUp: Latch;
  },
): void {
  const { leadership } = o;
  const { config, signal } = base;
  leadership.onStartedLeading(() => {
    if (!o.registration.operator || !config.bindings.enabled) return;
    const term = leadership.term();
    const sameTerm = (): boolean => leadership.isLeader() && leadership.term() === term;
    void (o.reconciler.caughtUp ? Promise.resolve() : o.caughtUp.promise).then(async () => {
      if (!signal.aborted && sameTerm()) await o.feed.relistFreshUntilDone('leading', signal, sameTerm);
    });
  });
}
