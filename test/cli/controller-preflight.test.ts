import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { preflight } from '../../src/cli/controller-preflight.js';
import { resolveControllerConfig, type ControllerConfig } from '../../src/controller/config.js';
import { startKubesim, type Kubesim } from '../../src/kubesim/index.js';
import { silentLogger } from '../../src/log/logger.js';
import { startTestMock, type TestMock } from '../helpers/mock-api.js';

/**
 * The controller's start-up check against kubesim and the mock API. With bindings off the chart
 * grants no rights on namespaces (issue #20), so the check must not wait for a namespace GET that
 * is refused for ever: a controller upgraded to bindings.enabled=false never started.
 */
describe('controller preflight', () => {
  let sim: Kubesim;
  let mock: TestMock;
  // A service account with no rights bound, as the chart leaves the controller with bindings off
  // as far as namespaces go: the namespace GET is refused (403).
  const controller = () => sim.kubeConfig(sim.serviceAccountToken('ops', 'eb-endpoint-binder-controller'));
  const config = (bindings: boolean): ControllerConfig => {
    const r = resolveControllerConfig(
      {
        api: { baseUrl: mock.url },
        releaseName: 'eb',
        operatorNamespace: 'ops',
        bindings: { enabled: bindings },
      },
      { ENDPOINT_BINDER_API_KEY: mock.key },
    );
    if (!r.ok) throw new Error(r.errors.join('\n'));
    return r.config;
  };

  beforeAll(async () => {
    sim = await startKubesim({ tls: true, initialNamespaces: ['default', 'ops'] });
    mock = await startTestMock();
    await sim
      .kubeConfig()
      .makeApiClient(CoreV1Api)
      .createNamespacedServiceAccount({
        namespace: 'ops',
        body: { metadata: { name: 'eb-endpoint-binder-controller' } },
      });
  });
  afterAll(async () => {
    await mock?.close();
    await sim?.stop();
  });

  it('bindings off: ready without reading the operator namespace', async () => {
    // Bounded: without the fix this retries until stopped.
    const verdict = await preflight(config(false), controller(), silentLogger(), AbortSignal.timeout(10_000));
    expect(verdict).toEqual({ kind: 'ok' });
  });

  it('bindings on: still waits for the operator namespace it may read', async () => {
    const stop = new AbortController();
    const timer = setTimeout(() => stop.abort(), 1_500);
    try {
      const verdict = await preflight(config(true), controller(), silentLogger(), stop.signal);
      expect(verdict.kind).toBe('retry');
    } finally {
      clearTimeout(timer);
    }
  });
});
