import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collect, ManagementClient } from '../src/api/client/index.js';
import { connectThroughIngress } from '../src/api/ingress/dialer.js';
import { DEMO_ENDPOINT_URL, DEMO_NAMESPACE, startDemo, type Demo } from '../src/demo/demo.js';
import { KubeConfig } from '@kubernetes/client-node';

let demo: Demo;
beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'eb-demo-'));
  demo = await startDemo({ kubeconfigPath: join(dir, 'kubeconfig.yaml') });
});
afterAll(async () => {
  await demo.stop();
});

describe('demo environment (npm start)', () => {
  it('serves the mock API with the printed development key and the example endpoint', async () => {
    const client = new ManagementClient({ baseUrl: demo.api.url, apiKey: demo.apiKey });
    const endpoints = await collect(client.endpoints.list());
    expect(endpoints.map((e) => e.url)).toContain(DEMO_ENDPOINT_URL);
    const tunnels = await collect(client.tunnels.list());
    expect(tunnels.map((t) => t.endpoint?.id)).toContain(demo.exampleEndpoint.id);
    await client.close();
  });

  it('writes a kubeconfig that @kubernetes/client-node uses against kubesim', async () => {
    const kc = new KubeConfig();
    kc.loadFromString(readFileSync(demo.kubeconfigPath, 'utf8'));
    const core = kc.makeApiClient(CoreV1Api);
    const namespaces = await core.listNamespace();
    expect(namespaces.items.map((n) => n.metadata?.name)).toContain(DEMO_NAMESPACE);
  });

  it('carries bytes through the binding ingress to the example upstream and back', async () => {
    const socket = await connectThroughIngress({
      address: demo.api.ingressAddress!,
      authtoken: demo.authtoken,
      url: DEMO_ENDPOINT_URL,
      timeoutMs: 5000,
    });
    const payload = Buffer.from('hello through the demo ingress');
    const chunks: Buffer[] = [];
    const done = new Promise<void>((resolve, reject) => {
      socket.on('data', (c: Buffer) => chunks.push(c));
      socket.on('end', () => resolve());
      socket.on('error', reject);
    });
    socket.resume();
    socket.end(payload);
    await done;
    const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
    expect(sha(Buffer.concat(chunks))).toBe(sha(payload));
  });
});
