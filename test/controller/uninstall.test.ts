import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collect } from '../../src/api/client/index.js';
import { MANAGED_BY_LABEL, ORPHANED_ANNOTATION, STATE_LABEL } from '../../src/binding/identity.js';
import { UNINSTALLED_AT_ANNOTATION, uninstall } from '../../src/controller/uninstall.js';
import { kinds } from '../../src/kube/index.js';
import { silentLogger } from '../../src/log/logger.js';
import { OPERATOR_NS, eventually, quietFor, startEnv, type ControllerEnv } from './env.js';

describe('endpoint-binder uninstall', () => {
  let env: ControllerEnv;
  const identity = { release: 'endpoint-binder', operatorNamespace: OPERATOR_NS };
  const owned = () => env.writes.cache.list().filter((s) => s.metadata.labels?.[MANAGED_BY_LABEL]);
  const common = () => ({
    kube: env.kube,
    identity,
    log: silentLogger(),
    renewDeadlineMs: 1_500,
    holdSeconds: 8,
  });

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

  it('retain, with the controller still running: it stands down, the Services stay marked; a later install adopts them', async () => {
    const ctl = await env.startController();
    await env.createEndpoint('http://a.prod');
    await env.createEndpoint('tcp://b.prod:6379');
    await eventually(() => owned().length === 5, 'projected (4 + bystander)');
    await eventually(() => ctl.isLeader(), 'leading');

    const report = await uninstall({ ...common(), api: undefined, policy: 'retain' });
    expect(report.orphaned).toHaveLength(4);
    expect(report.failed).toEqual([]);
    expect(ctl.isLeader()).toBe(false);
    // Released at the end (holder cleared, duration kept), the mark left for old controllers.
    const lease = () => env.kube.get(kinds.lease, OPERATOR_NS, 'endpoint-binder-controller');
    const released = await lease();
    expect(released?.spec?.holderIdentity).toBe('');
    expect(released?.spec?.leaseDurationSeconds).toBe(8);
    expect(released?.metadata.annotations?.[UNINSTALLED_AT_ANNOTATION]).toBeTruthy();
    await eventually(
      () => owned().filter((s) => s.metadata.annotations?.[ORPHANED_ANNOTATION]).length === 4,
      'marked',
    );
    // Kept Services no longer claim `projected`.
    expect(
      owned()
        .filter((s) => s.metadata.annotations?.[ORPHANED_ANNOTATION])
        .map((s) => s.metadata.labels?.[STATE_LABEL]),
    ).toEqual(['orphaned', 'orphaned', 'orphaned', 'orphaned']);
    // The running controller neither clears the marks nor projects a new endpoint: it stood down.
    env.writes.reset();
    await env.createEndpoint('http://c.prod');
    expect(await quietFor(env.writes, 1_000)).toBe(0);
    expect(
      (await env.service('prod', 'bystander'))?.metadata.annotations?.[ORPHANED_ANNOTATION],
    ).toBeUndefined();
    // The old controller, still running, saw the mark and never takes the released Lease back.
    expect((await lease())?.spec?.holderIdentity).toBe('');
    expect(ctl.isLeader()).toBe(false);
    await ctl.stop();

    // A new install (a new process) finds the Lease released and leads at once: adopts, clears the marks.
    const again = await env.startController();
    await eventually(
      () =>
        owned().length === 7 &&
        owned().every(
          (s) =>
            !s.metadata.annotations?.[ORPHANED_ANNOTATION] && s.metadata.labels?.[STATE_LABEL] !== 'orphaned',
        ),
      'adopted, marks and orphaned states cleared, c projected',
      30_000,
    );
    await again.stop();
  });

  it('delete, with the controller still running: every Service of the install goes, it is deregistered, nothing else is touched', async () => {
    const ctl = await env.startController();
    await eventually(() => ctl.isLeader(), 'leading', 30_000);
    expect(await collect(env.mock.client.kubernetesOperators.list())).toHaveLength(1);
    const report = await uninstall({ ...common(), api: env.mock.client, policy: 'delete' });
    expect(report.deleted).toHaveLength(6);
    expect(report.deregistered).toHaveLength(1);
    await eventually(() => owned().length === 1, 'only the bystander left');
    expect(await quietFor(env.writes, 1_000)).toBe(0); // the running controller re-creates nothing
    expect(await env.service('prod', 'bystander')).toBeDefined();
    expect(await collect(env.mock.client.kubernetesOperators.list())).toHaveLength(0);
    await ctl.stop();
  });
});
