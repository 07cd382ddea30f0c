import type { KubeConfig } from '@kubernetes/client-node';
import { Registry } from 'prom-client';
import { preflightVerdict, type PreflightVerdict } from '../check/preflight.js';
import { apiProbe, kubeGet } from '../check/run-checks.js';
import type { ControllerConfig } from '../controller/config.js';
import { KubeTransport } from '../kube/index.js';
import type { Logger } from '../log/logger.js';
import { parseHostPort } from '../net/host-port.js';
import { startProbeServer } from '../net/probe-server.js';
import { Backoff } from '../time/backoff.js';
import { PREFLIGHT_CURVE } from '../time/curves.js';
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
  /** Told why it is still waiting, after every attempt that must be retried. */
  onRetry?: (reason: string) => void,
): Promise<PreflightVerdict> {
  const transport = new KubeTransport(kubeConfig, { timeoutMs: 10_000 });
  const server = kubeConfig.getCurrentCluster()?.server ?? '(no server)';
  const backoff = new Backoff(PREFLIGHT_CURVE);
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
    onRetry?.(verdict.reason);
    if (clock.now() - lastWarnAt >= 60_000) {
      log.warn({ reason: verdict.reason }, 'not starting yet: an API is not reachable; retrying');
      lastWarnAt = clock.now();
    }
    await clock.sleep(backoff.next(clock.now(), clock.random()), signal);
  }
  return { kind: 'retry', reason: 'stopped' };
}

/**
 * The preflight with the controller's HTTP server already answering: a kubelet probing `/readyz`
 * while the APIs are checked gets `ready: false` and why, not a refused connection. The server is
 * closed before the controller starts its own on the same address.
 */
export async function preflightServingProbes(
  config: ControllerConfig,
  kubeConfig: KubeConfig,
  log: Logger,
  signal: AbortSignal,
  opts: { clock?: Clock; onListening?: (url: string) => void } = {},
): Promise<PreflightVerdict> {
  let reason = 'checking the management API and the Kubernetes API before registering';
  const at = parseHostPort(config.http.listen, { allowZero: true, allowEmptyHost: true });
  const probe = await startProbeServer({
    host: at.host || '0.0.0.0',
    port: at.port,
    registry: new Registry(),
    ready: () => ({ ok: false, reasons: [`preflight: ${reason}`], detail: { phase: 'preflight' } }),
  });
  log.info({ url: probe.url }, 'controller http server listening (preflight)');
  opts.onListening?.(probe.url);
  try {
    return await preflight(config, kubeConfig, log, signal, opts.clock ?? systemClock, (r) => (reason = r));
  } finally {
    await probe.close();
  }
}
