import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collect } from '../../src/api/client/index.js';
import { MANAGED_BY_LABEL, ORPHANED_ANNOTATION } from '../../src/binding/identity.js';
import { uninstall } from '../../src/controller/uninstall.js';
import { kinds } from '../../src/kube/index.js';
import { silentLogger } from '../../src/log/logger.js';
import { OPERATOR_NS, eventually, startEnv, type ControllerEnv } from './env.js';

describe('endpoint-binder uninstall', () => {
  let env: ControllerEnv;
  const identity = { release: 'endpoint-binder', operatorNamespace: OPERATOR_NS };
  const owned = () => env.writes.cache.list().filter((s) => s.metadata.labels?.[MANAGED_BY_LABEL]);

  beforeAll(async () => {
    env = await startEnv();
    await env.kube.create(kinds.service, {
      metadata: {
        name: 'bystander',
        namespace: 'prod',
        labels: { [MANAGED_BY_LABEL]: 'endpoint-binder', 'app.kubernetes.io/instance': 'other' },
      },
      spec: { type: 'ClusterIP', ports: [{ port: 1, protocol: 'TCP' }] },
    });
  });
  afterAll(async () => {
    await env?.close();
  });

  it('retain keeps every Service, marked orphaned; a new install adopts them and clears the mark', async () => {
    const ctl = await env.startController();
    await env.createEndpoint('http://a.prod');
    await env.createEndpoint('tcp://b.prod:6379');
    await eventually(() => owned().length === 5, 'projected (4 + bystander)');
    await ctl.stop();

    const report = await uninstall({
      kube: env.kube,
      api: undefined,
      identity,
      policy: 'retain',
      log: silentLogger(),
    });
    expect(report.orphaned).toHaveLength(4);
    expect(report.failed).toEqual([]);
    await eventually(
      () => owned().filter((s) => s.metadata.annotations?.[ORPHANED_ANNOTATION]).length === 4,
      'marked',
    );
    expect(
      (await env.service('prod', 'bystander'))?.metadata.annotations?.[ORPHANED_ANNOTATION],
    ).toBeUndefined();

    const again = await env.startController();
    await eventually(
      () => owned().every((s) => !s.metadata.annotations?.[ORPHANED_ANNOTATION]),
      'mark cleared by the new install',
    );
    await again.stop();
  });

  it('delete removes every Service of the install and deregisters it, and nothing else', async () => {
    expect(await collect(env.mock.client.kubernetesOperators.list())).toHaveLength(1);
    const report = await uninstall({
      kube: env.kube,
      api: env.mock.client,
      identity,
      policy: 'delete',
      log: silentLogger(),
    });
    expect(report.deleted).toHaveLength(4);
    expect(report.deregistered).toHaveLength(1);
    await eventually(() => owned().length === 1, 'only the bystander left');
    expect(await env.service('prod', 'bystander')).toBeDefined();
    expect(await collect(env.mock.client.kubernetesOperators.list())).toHaveLength(0);
  });
});
