import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ownershipLabels } from '../../src/binding/ownership/index.js';
import { ClusterState } from '../../src/controller/cluster.js';
import { KubeClient, KubeTransport, kinds } from '../../src/kube/index.js';
import { startKubesim, type Kubesim } from '../../src/kubesim/index.js';
import { silentLogger } from '../../src/log/logger.js';
import { fastTuning, waitFor } from '../kube/helpers.js';

const identity = { release: 'r', operatorNamespace: 'ops' };

describe('ClusterState: writes the watch has not shown yet', () => {
  let sim: Kubesim;
  let state: ClusterState;
  let kube: KubeClient;
  beforeAll(async () => {
    sim = await startKubesim({ initialNamespaces: ['default', 'ops'] });
    kube = new KubeClient(sim.kubeConfig());
    state = new ClusterState({
      transport: new KubeTransport(sim.kubeConfig()),
      identity,
      log: silentLogger(),
      metrics: new Registry(),
      onChange: () => undefined,
      tuning: fastTuning,
    });
    state.start();
    await state.waitForSync(new AbortController().signal);
  });
  afterAll(async () => {
    await state?.stop();
    await sim?.stop();
  });

  const svc = (name: string) => ({
    metadata: { name, namespace: 'ops', labels: ownershipLabels(identity) },
    spec: { type: 'ClusterIP', ports: [{ port: 80, protocol: 'TCP' }] },
  });
  const inView = (name: string) => state.snapshot(Date.now()).owned.has(`ops/${name}`);

  it('a deletion after our create shows at once, even when the watch delivered the create before the answer', async () => {
    const created = await kube.create(kinds.service, svc('raced'));
    await waitFor(() => state.services.get('ops', 'raced'), 'cache has it');
    state.recordWrite('ops/raced', created, Date.now()); // the HTTP answer arrives after the watch event
    await kube.deleteIfExists(kinds.service, 'ops', 'raced');
    await waitFor(() => !state.services.get('ops', 'raced'), 'cache saw the delete');
    expect(inView('raced')).toBe(false);
  });

  it('a deletion by someone else after our write (the watch slower than the answer) shows too', async () => {
    const created = await kube.create(kinds.service, svc('slow'));
    state.recordWrite('ops/slow', created, Date.now());
    expect(inView('slow')).toBe(true); // bridged before the watch shows it
    await kube.deleteIfExists(kinds.service, 'ops', 'slow');
    await waitFor(() => !inView('slow'), 'deletion visible');
  });

  it('our own delete hides the Service until the watch confirms it', async () => {
    await kube.create(kinds.service, svc('gone'));
    await waitFor(() => state.services.get('ops', 'gone'), 'cache has it');
    await kube.deleteIfExists(kinds.service, 'ops', 'gone');
    state.recordDelete('ops/gone', undefined, Date.now());
    expect(inView('gone')).toBe(false);
  });
});
