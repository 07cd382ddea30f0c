import { Counter, Gauge, Registry } from 'prom-client';

/**
 * The `endpoint_binder_kube_*` metrics, created once per Registry (several caches and electors
 * share one registry in a process; tests pass their own).
 */
export interface KubeMetrics {
  relists: Counter<'cache' | 'reason'>;
  watchRestarts: Counter<'cache' | 'reason'>;
  errors: Counter<'cache' | 'kind'>;
  invalidObjects: Counter<'cache'>;
  handlerErrors: Counter<'cache'>;
  objects: Gauge<'cache'>;
  synced: Gauge<'cache'>;
  lastEvent: Gauge<'cache'>;
  leaderStatus: Gauge<'lease'>;
  leaderTransitions: Counter<'lease' | 'event'>;
  events: Counter<'result'>;
}

const perRegistry = new WeakMap<Registry, KubeMetrics>();

export function kubeMetrics(registry: Registry = new Registry()): KubeMetrics {
  const existing = perRegistry.get(registry);
  if (existing) return existing;
  const registers = [registry];
  const m: KubeMetrics = {
    relists: new Counter({
      name: 'endpoint_binder_kube_cache_relists_total',
      help: 'Full lists done by a cache, by reason (initial, gone, periodic).',
      labelNames: ['cache', 'reason'],
      registers,
    }),
    watchRestarts: new Counter({
      name: 'endpoint_binder_kube_watch_restarts_total',
      help: 'Watch streams that ended and were reopened, by reason (closed, inactive, error, gone, relist).',
      labelNames: ['cache', 'reason'],
      registers,
    }),
    errors: new Counter({
      name: 'endpoint_binder_kube_cache_errors_total',
      help: 'List and watch failures of a cache, by kind (network, throttled, server, auth, gone, ...).',
      labelNames: ['cache', 'kind'],
      registers,
    }),
    invalidObjects: new Counter({
      name: 'endpoint_binder_kube_cache_invalid_objects_total',
      help: 'Objects skipped because they failed schema validation.',
      labelNames: ['cache'],
      registers,
    }),
    handlerErrors: new Counter({
      name: 'endpoint_binder_kube_cache_handler_errors_total',
      help: 'Exceptions thrown by cache event handlers (caught).',
      labelNames: ['cache'],
      registers,
    }),
    objects: new Gauge({
      name: 'endpoint_binder_kube_cache_objects',
      help: 'Objects currently held by a cache.',
      labelNames: ['cache'],
      registers,
    }),
    synced: new Gauge({
      name: 'endpoint_binder_kube_cache_synced',
      help: '1 once the cache completed its first list.',
      labelNames: ['cache'],
      registers,
    }),
    lastEvent: new Gauge({
      name: 'endpoint_binder_kube_cache_last_activity_timestamp_seconds',
      help: 'Time of the last successful list or watch activity (incl. bookmarks).',
      labelNames: ['cache'],
      registers,
    }),
    leaderStatus: new Gauge({
      name: 'endpoint_binder_leader_election_master_status',
      help: '1 while this process holds the lease, else 0.',
      labelNames: ['lease'],
      registers,
    }),
    leaderTransitions: new Counter({
      name: 'endpoint_binder_leader_election_transitions_total',
      help: 'Leadership changes seen by this process (started, stopped).',
      labelNames: ['lease', 'event'],
      registers,
    }),
    events: new Counter({
      name: 'endpoint_binder_kube_events_total',
      help: 'Kubernetes Events recorded, by result (created, aggregated, filtered by the spam filter, dropped, invalid, failed).',
      labelNames: ['result'],
      registers,
    }),
  };
  perRegistry.set(registry, m);
  return m;
}
