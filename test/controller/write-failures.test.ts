import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Controller } from '../../src/controller/controller.js';
import { collectionPath, kinds, KubeTransport, listAll } from '../../src/kube/index.js';
import { EventSchema } from '../../src/kube/objects.js';
import { OPERATOR_NS, eventually, startEnv, type ControllerEnv } from './env.js';

describe('controller: a Service the API server refuses', () => {
  let env: ControllerEnv;
  let ctl: Controller;
  beforeAll(async () => {
    env = await startEnv({ namespaces: ['prod'] });
    ctl = await env.startController({ pod: { name: 'controller-0', namespace: OPERATOR_NS } });
    await eventually(() => ctl.isReady(), 'ready');
  });
  afterAll(async () => {
    await env?.close();
  });

  it("shows error with the API server's message while the writes fail, then projects once they succeed", async () => {
    const ok = await env.createEndpoint('http://fine.prod');
    await eventually(() => env.service('prod', 'fine'), 'first endpoint projected');
    // Its alias is written before its internal Service (which records the alias's uid): wait
    // for the pass to finish, so the fault below meets only the next endpoint's writes.
    await eventually(
      () => ctl.status().endpoints.find((e) => e.id === ok.id)?.state === 'projected' || undefined,
      'first endpoint projected in status',
    );
    env.sim.faults.failRequests({ status: 500, share: 1, match: { verb: 'create', resource: 'services' } });
    const ep = await env.createEndpoint('http://broken.prod');
    const status = await eventually(() => {
      const s = ctl.status().endpoints.find((e) => e.id === ep.id);
      return s?.state === 'error' ? s : undefined;
    }, 'error state');
    expect(status.reason).toMatch(/^writing its Services failed: /);
    expect(ctl.status().endpoints.find((e) => e.id === ok.id)?.state).toBe('projected');
    const transport = new KubeTransport(env.sim.kubeConfig());
    const warning = await eventually(async () => {
      const all = (await listAll({ transport, path: collectionPath(kinds.event), schema: EventSchema }))
        .items;
      return all.find((e) => e.reason === 'WriteFailed' && e.message?.includes('Could not create Service'));
    }, 'a WriteFailed Event');
    expect(warning.type).toBe('Warning');

    env.sim.faults.clear();
    await eventually(() => env.service('prod', 'broken'), 'written after the backoff');
    await eventually(
      () => ctl.status().endpoints.find((e) => e.id === ep.id)?.state === 'projected',
      'error gone',
    );
  });
});
