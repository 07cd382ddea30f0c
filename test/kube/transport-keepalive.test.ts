import { connect, createServer, type AddressInfo, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeClient, kinds } from '../../src/kube/index.js';
import { startKubesim, type Kubesim } from '../../src/kubesim/index.js';

/** Counts the TCP connections a client opens to kubesim. */
async function countingProxy(
  target: URL,
): Promise<{ url: string; connections: () => number; server: Server }> {
  let n = 0;
  const server = createServer((client) => {
    n++;
    const upstream = connect(Number(target.port), target.hostname);
    client.pipe(upstream).pipe(client);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, connections: () => n, server };
}

describe('KubeTransport keeps connections alive', () => {
  let sim: Kubesim;
  beforeAll(async () => {
    sim = await startKubesim();
  });
  afterAll(async () => {
    await sim?.stop();
  });

  it('sends 50 writes and reads over a handful of connections, not one each', async () => {
    const proxy = await countingProxy(new URL(sim.url));
    const kc = sim.kubeConfig();
    kc.clusters = kc.clusters.map((c) => ({ ...c, server: proxy.url }));
    const kube = new KubeClient(kc);
    for (let i = 0; i < 25; i++) {
      await kube.create(kinds.service, {
        metadata: { name: `s-${i}`, namespace: 'default' },
        spec: { ports: [{ port: 80, protocol: 'TCP' }] },
      });
      await kube.get(kinds.service, 'default', `s-${i}`);
    }
    expect(proxy.connections()).toBeLessThanOrEqual(2);
    proxy.server.close();
  });
});
