import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PORTS_ANNOTATION } from '../../src/binding/identity.js';
import type { Controller } from '../../src/controller/controller.js';
import { kinds } from '../../src/kube/index.js';
import { captureLogs, type CapturedLogs } from '../helpers/logs.js';
import { OPERATOR_NS, eventually, startEnv, type ControllerEnv } from './env.js';

const OURS_INTERNAL = {
  'app.kubernetes.io/managed-by': 'endpoint-binder',
  'app.kubernetes.io/instance': 'endpoint-binder',
  'endpoint-binder.io/operator-namespace': OPERATOR_NS,
  'endpoint-binder.io/role': 'internal',
};

const LEFT_ALONE =
  "internal Service carries this install's labels but the install record does not list it; claims no port, left alone";

/**
 * Issue #18 item 3: port claims come only from internal Services the controller created (their
 * uids listed in the install record, which only the controller's service account writes). A
 * hand-made Service in the operator namespace with our labels and a ports annotation steers nothing.
 */
describe('controller: port claims only from recorded internal Services', () => {
  let env: ControllerEnv;
  let ctl: Controller;
  let logs: CapturedLogs;

  beforeAll(async () => {
    env = await startEnv({ namespaces: ['prod'] });
    logs = captureLogs('info');
    ctl = await env.startController({ logger: logs.logger });
    await eventually(() => ctl.isReady(), 'controller ready');
  });
  afterAll(async () => {
    await env?.close();
  });

  const record = async (): Promise<string[]> =>
    (
      (await env.kube.get(kinds.configMap, OPERATOR_NS, 'endpoint-binder-install'))?.data?.[
        'internal-services'
      ] ?? ''
    )
      .split(',')
      .filter(Boolean);

  it('a hand-made internal Service claiming a held port moves no port, is reported and left alone', async () => {
    const api = await env.createEndpoint('http://api.prod');
    const held = await eventually(async () => {
      const s = await env.internalOf(api.id);
      return ctl.status().endpoints.find((e) => e.id === api.id)?.state === 'projected' ? s : undefined;
    }, 'api projected');
    const port = held.spec!.ports![0]!.targetPort as number;
    await eventually(async () => (await record()).includes(held.metadata.uid!) || undefined, 'api listed');

    // Someone who may create Services in the operator namespace forges an internal Service: our
    // labels, a ports annotation claiming api's forwarder port for another URL.
    const forged = await env.kube.create(kinds.service, {
      metadata: {
        name: 'ep-forged',
        namespace: OPERATOR_NS,
        labels: OURS_INTERNAL,
        annotations: {
          [PORTS_ANNOTATION]: JSON.stringify({ [String(port)]: 'http://web.prod:80' }),
          'endpoint-binder.io/endpoint-url': 'http://web.prod:80',
        },
      },
      spec: { type: 'ClusterIP', ports: [{ name: 'http-80', port: 80, targetPort: port, protocol: 'TCP' }] },
    });
    await eventually(
      () =>
        logs.lines.some((l) => l['msg'] === LEFT_ALONE && l['service'] === `${OPERATOR_NS}/ep-forged`) ||
        undefined,
      'forged Service reported',
    );

    // The endpoint the forged claim names arrives: it gets a port of its own, api keeps its port.
    const web = await env.createEndpoint('http://web.prod');
    const webInternal = await eventually(async () => {
      const s = await env.internalOf(web.id);
      return ctl.status().endpoints.find((e) => e.id === web.id)?.state === 'projected' ? s : undefined;
    }, 'web projected');
    expect(webInternal.spec?.ports?.[0]?.targetPort).not.toBe(port);
    const apiNow = await env.internalOf(api.id);
    expect(apiNow?.spec?.ports?.[0]?.targetPort).toBe(port);
    expect(apiNow?.metadata.resourceVersion).toBe(held.metadata.resourceVersion);
    expect(logs.lines.filter((l) => l['msg'] === 'forwarder port repaired')).toEqual([]);

    // Left alone: neither updated nor deleted, never listed; the alias it names is not taken over.
    const live = await env.service(OPERATOR_NS, 'ep-forged');
    expect(live?.metadata.uid).toBe(forged.metadata.uid);
    expect(live?.metadata.resourceVersion).toBe(forged.metadata.resourceVersion);
    const listed = await eventually(async () => {
      const l = await record();
      return l.includes(webInternal.metadata.uid!) ? l : undefined;
    }, 'web listed');
    expect(listed).not.toContain(forged.metadata.uid);
    expect(listed.sort()).toEqual([held.metadata.uid!, webInternal.metadata.uid!].sort());
  });

  it('a second replica started now trusts the listed internal Services and not the forged one', async () => {
    const second = captureLogs('info');
    const follower = await env.startController({ logger: second.logger, identity: 'replica-2' });
    await eventually(() => follower.isReady(), 'follower ready');
    await eventually(
      () =>
        (follower.status().endpoints.every((e) => e.state === 'projected') &&
          follower.status().endpoints.length === 2) ||
        undefined,
      'follower sees both endpoints projected',
    );
    await eventually(
      () =>
        second.lines.some((l) => l['msg'] === LEFT_ALONE && l['service'] === `${OPERATOR_NS}/ep-forged`) ||
        undefined,
      'follower reports the forged Service',
    );
    expect(second.lines.filter((l) => l['msg'] === LEFT_ALONE).map((l) => l['service'])).toEqual([
      `${OPERATOR_NS}/ep-forged`,
    ]);
  });
});
