import { afterEach, describe, expect, it } from 'vitest';
import { collect } from '../../src/api/client/index.js';
import { resolveControllerConfig } from '../../src/controller/config.js';
import { startController } from '../../src/controller/controller.js';
import { silentLogger } from '../../src/log/logger.js';
import { captureLogs } from '../helpers/logs.js';
import { ACME_KEY } from '../helpers/mock-api.js';
import { OPERATOR_NS, eventually, startEnv, type ControllerEnv } from './env.js';

describe('controller: registration', () => {
  let env: ControllerEnv | undefined;
  afterEach(async () => {
    await env?.close();
    env = undefined;
  });

  it('registers once, adopts its record on restart, and keeps description and selector current', async () => {
    env = await startEnv();
    const first = await env.startController({ registration: { description: 'first' } });
    await eventually(() => first.status().operator, 'registered');
    const id = first.status().operator!.id;
    await first.stop();
    const second = await env.startController({
      registration: { description: 'second', metadata: '{"team":"net"}' },
      bindings: { endpointSelector: "endpoint.namespace == 'prod'" },
    });
    await eventually(() => second.status().operator, 'registered again');
    expect(second.status().operator!.id).toBe(id);
    const ops = await collect(env.mock.client.kubernetesOperators.list());
    expect(ops).toHaveLength(1);
    expect(ops[0]).toMatchObject({
      description: 'second',
      metadata: '{"team":"net"}',
      enabled_features: ['bindings'],
      deployment: { name: 'endpoint-binder', namespace: OPERATOR_NS },
      binding: { endpoint_selector: "endpoint.namespace == 'prod'" },
    });
  });

  it('stops with the API message when the key is refused (403), never logging the key', async () => {
    env = await startEnv();
    const logs = captureLogs('debug');
    const r = resolveControllerConfig(
      { api: { baseUrl: env.mock.url }, operatorNamespace: OPERATOR_NS, http: { listen: '127.0.0.1:0' } },
      { ENDPOINT_BINDER_API_KEY: 'wrong-key-0123456789' },
    );
    if (!r.ok) throw new Error(r.errors.join());
    const c = await startController({
      config: r.config,
      kubeConfig: env.sim.kubeConfig(),
      logger: logs.logger,
    });
    const err = await c.done;
    expect(err?.message).toMatch(/refused the operator registration: 403/);
    expect(c.isReady()).toBe(false);
    await c.stop();
    expect(logs.raw.join('\n')).not.toContain('wrong-key-0123456789');
  });

  it('retries through 5xx with /readyz false, then registers', async () => {
    env = await startEnv();
    await env.mock.admin('POST', '/admin/faults', {
      status: 503,
      count: 12,
      path_prefix: '/kubernetes_operators',
    });
    const r = resolveControllerConfig(
      { api: { baseUrl: env.mock.url }, operatorNamespace: OPERATOR_NS, http: { listen: '127.0.0.1:0' } },
      { ENDPOINT_BINDER_API_KEY: ACME_KEY },
    );
    if (!r.ok) throw new Error(r.errors.join());
    const c = await startController({
      config: r.config,
      kubeConfig: env.sim.kubeConfig(),
      logger: silentLogger(),
    });
    try {
      const res = await fetch(`${c.url}/readyz`);
      expect(res.status).toBe(503);
      const body = (await res.json()) as { registered: boolean };
      expect(body.registered).toBe(false);
      await eventually(() => c.status().operator, 'registered after the faults', 30_000);
      await eventually(async () => (await fetch(`${c.url}/readyz`)).status === 200, 'ready', 30_000);
    } finally {
      await c.stop();
    }
  });

  it('two replicas starting at once end with one operator record, adopted by both', async () => {
    env = await startEnv();
    const [a, b] = await Promise.all([env.startController(), env.startController()]);
    await eventually(() => a.status().operator && b.status().operator, 'both registered');
    expect(a.status().operator!.id).toBe(b.status().operator!.id);
    expect(await collect(env.mock.client.kubernetesOperators.list())).toHaveLength(1);
  });
});
