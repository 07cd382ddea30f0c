import { afterEach, describe, expect, it } from 'vitest';
import { installRecordConfigMap } from '../../src/binding/ownership/index.js';
import { InstallRecordWriter } from '../../src/controller/install-record-writer.js';
import { KubeClient, kinds } from '../../src/kube/index.js';
import { startKubesim, type Kubesim } from '../../src/kubesim/index.js';
import { captureLogs } from '../helpers/logs.js';
import { waitFor } from '../ingress/helpers.js';

const NS = 'endpoint-binder';
const IDENTITY = { release: 'eb', operatorNamespace: NS };

/**
 * The install record is where the forwarders take the ingress address from (#15 item 4): the
 * controller creates it, replaces its data whole on a change (a key the registration no longer
 * has goes), and never overwrites a ConfigMap of that name that is not this install's.
 */
describe('InstallRecordWriter', () => {
  let sim: Kubesim | undefined;
  let ctl = new AbortController();
  afterEach(async () => {
    ctl.abort();
    ctl = new AbortController();
    await sim?.stop();
    sim = undefined;
  });

  it('creates the record, replaces its data whole on a change, and logs each write', async () => {
    sim = await startKubesim({ initialNamespaces: [NS] });
    const kube = new KubeClient(sim.kubeConfig());
    const logs = captureLogs('info');
    const writer = new InstallRecordWriter({
      kube,
      identity: IDENTITY,
      log: logs.logger,
      signal: ctl.signal,
    });
    writer.publish({ ingressAddress: 'ingress.example:443', operatorId: 'k8sop_1' });
    await waitFor(() => logs.lines.filter((l) => l['msg'] === 'install record written').length === 1, 10_000);
    expect((await kube.get(kinds.configMap, NS, 'eb-install'))?.data).toEqual({
      'ingress-address': 'ingress.example:443',
      'operator-id': 'k8sop_1',
    });
    writer.publish({ operatorId: 'k8sop_2' });
    await waitFor(() => logs.lines.filter((l) => l['msg'] === 'install record written').length === 2, 10_000);
    expect((await kube.get(kinds.configMap, NS, 'eb-install'))?.data).toEqual({ 'operator-id': 'k8sop_2' });
    expect(
      logs.lines.filter((l) => l['msg'] === 'install record written').map((l) => l['operation']),
    ).toEqual(['created', 'updated']);
  });

  it('flush resolves once what was recorded is written (a stopping leader waits for it)', async () => {
    sim = await startKubesim({ initialNamespaces: [NS] });
    const kube = new KubeClient(sim.kubeConfig());
    const writer = new InstallRecordWriter({
      kube,
      identity: IDENTITY,
      log: captureLogs('info').logger,
      signal: ctl.signal,
    });
    await writer.flush(10_000); // nothing pending: at once
    writer.publish({ operatorId: 'k8sop_1' });
    writer.recordInternalServices({ add: ['uid-a', 'uid-b'], remove: [] });
    await writer.flush(10_000);
    expect((await kube.get(kinds.configMap, NS, 'eb-install'))?.data).toEqual({
      'operator-id': 'k8sop_1',
      'internal-services': 'uid-a,uid-b',
    });
  });

  it('never overwrites a ConfigMap of that name without this install labels: reports it instead', async () => {
    sim = await startKubesim({ initialNamespaces: [NS] });
    const kube = new KubeClient(sim.kubeConfig());
    const foreign = installRecordConfigMap(IDENTITY, { ingressAddress: 'attacker.example:443' });
    foreign.metadata.labels = {};
    await kube.create(kinds.configMap, foreign);
    const logs = captureLogs('info');
    const writer = new InstallRecordWriter({
      kube,
      identity: IDENTITY,
      log: logs.logger,
      signal: ctl.signal,
    });
    writer.publish({ ingressAddress: 'ingress.example:443', operatorId: 'k8sop_1' });
    await waitFor(() => logs.lines.some((l) => l['msg'] === 'install record not written'), 10_000);
    const line = logs.lines.find((l) => l['msg'] === 'install record not written')!;
    expect(String(line['error'])).toContain("exists without this install's labels");
    expect((await kube.get(kinds.configMap, NS, 'eb-install'))?.data).toEqual({
      'ingress-address': 'attacker.example:443',
    });
  });
});
