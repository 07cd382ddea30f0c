import { Gauge, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * The controller's metrics registry before any part registers on it: Node's process metrics and
 * `endpoint_binder_build_info`.
 */
export function controllerRegistry(version: string): Registry {
  const registry = new Registry();
  // prom-client's names already say process_/nodejs_: the prefix is ours alone
  // (endpoint_binder_process_cpu_seconds_total, not endpoint_binder_process_process_…).
  collectDefaultMetrics({ register: registry, prefix: 'endpoint_binder_' });
  new Gauge({
    name: 'endpoint_binder_build_info',
    help: 'Always 1; the labels say which build runs (version, Node.js version).',
    labelNames: ['version', 'node'],
    registers: [registry],
  }).set({ version, node: process.version }, 1);
  return registry;
}
