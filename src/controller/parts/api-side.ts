import { ManagementClient } from '../../api/client/index.js';
import type { KubeClient } from '../../kube/index.js';
import type { Clock } from '../../time/clock.js';
import type { CurveBounds } from '../../time/curves.js';
import type { Notice } from '../../time/notice.js';
import { EndpointFeed } from '../feed.js';
import { InstallRecordWriter } from '../install-record-writer.js';
import { PASS } from '../queue.js';
import { Registration } from '../registration.js';
import type { ControllerBase } from './base.js';
import type { Leadership } from './leadership.js';

/** The start options the management API side reads (`ControllerOptions` has them). */
export interface ApiSideSettings {
  /** Poll backoff while notifications are down (tests shorten it). */
  poll?: CurveBounds;
  /** false: never open the notification stream (benchmarks). */
  notifications?: boolean;
}

export interface ApiSideParts {
  version: string;
  kube: KubeClient;
  /** Only the leader registers again when the record is gone. */
  leadership: Leadership;
  /** Told after a complete listing that changed nothing (it may still release held deletes). */
  unchangedListing: Notice;
}

/**
 * The controller's side of the management API: the client, this install's registration, the
 * install record it publishes (the forwarders take the ingress address only from it, never
 * from a Service) and the endpoint feed.
 */
export interface ApiSide {
  client: ManagementClient;
  installRecord: InstallRecordWriter;
  registration: Registration;
  feed: EndpointFeed;
}

export function apiSide(base: ControllerBase, settings: ApiSideSettings, parts: ApiSideParts): ApiSide {
  const { config, identity, log, metrics, clock, signal, queue } = base;
  const client = new ManagementClient({
    baseUrl: config.api.baseUrl,
    apiKey: config.apiKey,
    timeoutMs: config.api.timeoutMs,
    retry: { retries: 3 },
    logger: log.child({ component: 'api-client' }),
  });
  const installRecord = new InstallRecordWriter({ kube: parts.kube, identity, log, signal, clock });
  const registration = new Registration({
    client,
    spec: {
      name: config.releaseName,
      namespace: config.operatorNamespace,
      version: parts.version,
      description: config.registration.description,
      metadata: config.registration.metadata,
      bindingsEnabled: config.bindings.enabled,
      endpointSelector: config.bindings.endpointSelector,
    },
    log,
    isLeader: () => parts.leadership.isLeader(),
    signal,
    clock,
    onRetry: () => metrics.apiCalls.inc({ call: 'register', result: 'error' }),
    onRegistered: (operator) => {
      metrics.apiCalls.inc({ call: 'register', result: 'ok' });
      metrics.registered.set(1);
      // The install record is published after the first registration and after every
      // re-registration.
      installRecord.publish({
        ingressAddress: operator.binding.ingress_endpoint ?? undefined,
        operatorId: operator.id,
      });
      queue.requestPass();
    },
  });
  const feed = new EndpointFeed({
    client,
    registration,
    log: log.child({ component: 'feed' }),
    metrics,
    resyncIntervalMs: config.resyncIntervalSeconds * 1000,
    // An endpoint change's pass starts at once, not after the window that merges the cluster's
    // event bursts (our own writes' echoes among them); a burst of changes still makes one pass
    // per pass, as changes during a pass make one more.
    onChange: () => queue.add(PASS),
    onUnchangedListing: () => parts.unchangedListing.tell(),
    clock,
    ...(settings.poll ? { poll: settings.poll } : {}),
    ...(settings.notifications === false ? { notifications: false } : {}),
  });
  return { client, installRecord, registration, feed };
}

/** The API's operator record is put back to the config on every resync (leader only). */
export async function repairRecordEveryResync(
  registration: Registration,
  intervalMs: number,
  clock: Clock,
  signal: AbortSignal,
): Promise<void> {
  while (!signal.aborted) {
    await clock.sleep(intervalMs, signal);
    if (signal.aborted) return;
    await registration.repairDrift().catch(() => []);
  }
}

/**
 * A complete listing of the account's endpoints now (what `resync` and the timer do), after the
 * operator record is put back to the config; true when the listing succeeded.
 */
export async function resyncNow(
  registration: Registration,
  feed: EndpointFeed,
  signal: AbortSignal,
): Promise<boolean> {
  if (!registration.operator) return false;
  await registration.repairDrift().catch(() => []);
  // A listing already running began before the request and may predate what was asked about.
  return feed.relistFresh('requested', signal);
}
