import type { KubeConfig } from '@kubernetes/client-node';
import { preflightVerdict, type PreflightVerdict } from '../check/preflight.js';
import { apiProbe, kubeGet } from '../check/run-checks.js';
import type { ControllerConfig } from '../controller/config.js';
import { KubeTransport } from '../kube/index.js';
import type { Logger } from '../log/logger.js';
import { Backoff } from '../time/backoff.js';
import { systemClock, type Clock } from '../time/clock.js';

/**
 * Before the controller registers: both APIs must answer. Non-healing errors end here with one
 * line; healing ones are retried with backoff and logged as one human warning per minute.
 */
export async function preflight(
  config: ControllerConfig,
  kubeConfig: KubeConfig,
  log: Logger,
  signal: AbortSignal,
  clock: Clock = systemClock,
): Promise<PreflightVerdict> {
  const transport = new KubeTransport(kubeConfig, { timeoutMs: 10_000 });
  const server = kubeConfig.getCurrentCluster()?.server ?? '(no server)';
  const backoff = new Backoff({ initialMs: 500, maxMs: 30_000, jitter: 0.2, resetAfterMs: 120_000 });
  let lastWarnAt = -Infinity;
  while (!signal.aborted) {
    const [api, cluster] = await Promise.all([
      apiProbe(config, 10_000),
      kubeGet(transport, '/version', 10_000),
    ]);
    // With bindings off the chart grants no rights on namespaces (the controller reads none), so
    // asking would be a 403 retried for ever; the Lease and install record calls find a missing
    // namespace anyway.
    const namespaceAnswer =
      cluster.kind === 'ok' && config.bindings.enabled
        ? await kubeGet(transport, `/api/v1/namespaces/${config.operatorNamespace}`, 10_000)
        : undefined;
    const verdict = preflightVerdict({
      apiUrl: config.api.baseUrl,
      api,
      server,
      cluster,
      namespace: config.operatorNamespace,
      namespaceAnswer,
    });
    if (verdict.kind !== 'retry') return verdict;
    if (clock.now() - lastWarnAt >= 60_000) {
      log.warn({ reason: verdict.reason }, 'not starting yet: an API is not reachable; retrying');
      lastWarnAt = clock.now();
    }
    await clock.sleep(backoff.next(clock.now(), clock.random()), signal);
  }
  return { kind: 'retry', reason: 'stopped' };
}
