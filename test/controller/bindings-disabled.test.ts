import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startEnv, type ControllerEnv } from './env.js';

/**
 * bindings.enabled false: the chart grants the controller no Service or Namespace rights, so the
 * controller must not need them: it registers, is ready, and never reads either.
 */
describe('controller: bindings disabled needs no Service or Namespace access', () => {
  let env: ControllerEnv;

  beforeAll(async () => {
    env = await startEnv();
  });
  afterAll(async () => {
    env?.sim.faults.clear();
    await env?.close();
  });

  it('is ready while every Service and Namespace request would fail', async () => {
    env.sim.faults.failRequests({ status: 500, share: 1, match: { resource: 'services' } });
    env.sim.faults.failRequests({ status: 500, share: 1, match: { resource: 'namespaces' } });
    const ctl = await env.startController({ bindings: { enabled: false } });
    await eventually(() => ctl.isReady() || undefined, 'ready without caches');
    expect(ctl.status().bindingsEnabled).toBe(false);
    expect(ctl.status().endpoints).toEqual([]);
  });
});
