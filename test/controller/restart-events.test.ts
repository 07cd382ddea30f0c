import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Controller } from '../../src/controller/controller.js';
import { collectionPath, createCache, kinds, type Cache, type KubeObject } from '../../src/kube/index.js';
import { silentLogger } from '../../src/log/logger.js';
import { fastTuning } from '../kube/helpers.js';
import { OPERATOR_NS, eventually, startEnv, type ControllerEnv } from './env.js';

/** Event writes (created or bumped) as a watch of the API server sees them, independent of the controller. */
let writes = 0;
const eventWrites = (_env: ControllerEnv): number => writes;

/**
 * Issue #30 item 5: a restart sends an Event only for a state that changed since what the
 * Services and the Events already there show; a follower sends none.
 */
describe('controller: state Events across restarts and followers', () => {
  let env: ControllerEnv;
  let first: Controller;
  const waitStates = (c: Controller) =>
    eventually(
      () =>
        (c.status().counts['namespace-missing'] === 3 && c.status().counts['invalid-url'] === 2) || undefined,
      'every endpoint in its problem state',
    );

  let events: Cache<KubeObject> | undefined;
  beforeAll(async () => {
    env = await startEnv({ namespaces: ['prod'] });
    events = createCache({
      kubeConfig: env.sim.kubeConfig(),
      path: collectionPath(kinds.event),
      schema: kinds.event.schema,
      logger: silentLogger(),
      options: fastTuning,
    });
    events.on('add', () => writes++);
    events.on('update', () => writes++);
    events.start();
    await events.waitForSync();
    for (const ns of ['gone-a', 'gone-b', 'gone-c']) await env.createEndpoint(`http://svc.${ns}`);
    for (const name of ['9a', '9b']) await env.createEndpoint(`http://${name}.prod`);
    first = await env.startController({ identity: 'first', pod: { name: 'ctl-1', namespace: OPERATOR_NS } });
    await waitStates(first);
    // Its Warnings are written (five endpoints, five Events).
    await eventually(() => eventWrites(env) >= 5 || undefined, 'the first Warnings written');
  });
  afterAll(async () => {
    await events?.stop();
    await env?.close();
  });

  it('a follower sends no Event; a restarted leader sends none for the states the cluster already shows', async () => {
    const follower = await env.startController({
      identity: 'second',
      pod: { name: 'ctl-2', namespace: OPERATOR_NS },
    });
    await eventually(() => follower.isReady() || undefined, 'follower ready');
    await waitStates(follower);
    await new Promise((r) => setTimeout(r, 500));
    const before = eventWrites(env);
    expect(follower.isLeader()).toBe(false);

    // The leader goes (a restart: a new Pod takes over with no memory of the states).
    await first.stop();
    await eventually(() => follower.isLeader() || undefined, 'the second replica leads');
    const third = await env.startController({
      identity: 'third',
      pod: { name: 'ctl-3', namespace: OPERATOR_NS },
    });
    await waitStates(third);
    await follower.stop();
    await eventually(() => third.isLeader() || undefined, 'a fresh process leads');
    await waitStates(third);
    await new Promise((r) => setTimeout(r, 800));
    expect(eventWrites(env) - before).toBe(0);
  });
});
