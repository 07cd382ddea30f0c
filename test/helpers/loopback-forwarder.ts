import type { KubeConfig } from '@kubernetes/client-node';
import { ForwarderConfig } from '../../src/forwarder/config.js';
import { startForwarder, type Forwarder } from '../../src/forwarder/forwarder.js';
import { silentLogger } from '../../src/log/logger.js';
import { ACME_AUTHTOKEN } from './mock-api.js';

/**
 * A forwarder of the install `endpoint-binder` in namespace `endpoint-binder` on loopback, as
 * the controller tests run it: plain ingress, HTTP server on an OS-chosen port, no drain wait,
 * fast caches; `limits` as given (e.g. one dial attempt, so a refusal is recorded at once).
 */
export function startLoopbackForwarder(
  kubeConfig: KubeConfig,
  limits: Record<string, number> = {},
): Promise<Forwarder> {
  return startForwarder({
    config: ForwarderConfig.parse({
      releaseName: 'endpoint-binder',
      operatorNamespace: 'endpoint-binder',
      listenHost: '127.0.0.1',
      ingress: { tls: false },
      http: { listen: '127.0.0.1:0' },
      drain: { delaySeconds: 0, timeoutSeconds: 1 },
      limits,
    }),
    authtoken: ACME_AUTHTOKEN,
    kubeConfig,
    logger: silentLogger(),
    cacheTuning: { inactivityMs: 5_000, rewatchDelayMs: 20, minWatchMs: 100 },
  });
}
