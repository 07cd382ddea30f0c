import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** The controller's own `endpoint_binder_*` metrics (the kube plumbing adds its own to the same registry). */
export interface ControllerMetrics {
  endpoints: Gauge<'state'>;
  servicesDesired: Gauge<'role'>;
  servicesApplied: Gauge<'role'>;
  planDuration: Histogram;
  applyDuration: Histogram;
  apiCalls: Counter<'call' | 'result'>;
  kubeWrites: Counter<'op' | 'result'>;
  kubeReads: Counter<'op' | 'result'>;
  notifications: Counter<'type'>;
  notificationLag: Histogram;
  lastFullSync: Gauge;
  lastApply: Gauge;
  registered: Gauge;
}

export function controllerMetrics(registry: Registry): ControllerMetrics {
  const registers = [registry];
  return {
    endpoints: new Gauge({
      name: 'endpoint_binder_endpoints',
      help: 'Cluster-bound endpoints of the account by projection state.',
      labelNames: ['state'],
      registers,
    }),
    servicesDesired: new Gauge({
      name: 'endpoint_binder_services_desired',
      help: 'Services the current plan wants, by role (internal, alias).',
      labelNames: ['role'],
      registers,
    }),
    servicesApplied: new Gauge({
      name: 'endpoint_binder_services_applied',
      help: 'Desired Services that match the cluster after the last apply, by role.',
      labelNames: ['role'],
      registers,
    }),
    planDuration: new Histogram({
      name: 'endpoint_binder_plan_duration_seconds',
      help: 'Time to compute the desired state and the plan (pure work).',
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers,
    }),
    applyDuration: new Histogram({
      name: 'endpoint_binder_apply_duration_seconds',
      help: 'Time to apply one plan to the cluster.',
      buckets: [0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 120],
      registers,
    }),
    apiCalls: new Counter({
      name: 'endpoint_binder_api_calls_total',
      help: 'Management API calls by call and result (ok, error).',
      labelNames: ['call', 'result'],
      registers,
    }),
    kubeWrites: new Counter({
      name: 'endpoint_binder_kube_writes_total',
      help: 'Kubernetes Service writes by operation (create, update, delete) and result (ok, conflict, already_exists, forbidden, error).',
      labelNames: ['op', 'result'],
      registers,
    }),
    kubeReads: new Counter({
      name: 'endpoint_binder_kube_reads_total',
      help: 'Reads of Service names the projection needs before it plans (get: one name, list: a namespace), by result (ok, error).',
      labelNames: ['op', 'result'],
      registers,
    }),
    notifications: new Counter({
      name: 'endpoint_binder_notifications_total',
      help: 'Endpoint notifications received, by type.',
      labelNames: ['type'],
      registers,
    }),
    notificationLag: new Histogram({
      name: 'endpoint_binder_notification_lag_seconds',
      help: "Time from an endpoint's updated_at to its notification arriving here.",
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    }),
    lastFullSync: new Gauge({
      name: 'endpoint_binder_last_full_sync_timestamp_seconds',
      help: 'Time of the last complete, successful listing of the account endpoints.',
      registers,
    }),
    lastApply: new Gauge({
      name: 'endpoint_binder_last_apply_timestamp_seconds',
      help: 'Time the last plan finished applying with no failures.',
      registers,
    }),
    registered: new Gauge({
      name: 'endpoint_binder_operator_registered',
      help: '1 once the operator registration is in place.',
      registers,
    }),
  };
}
