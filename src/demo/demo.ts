import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { ManagementClient } from '../api/client/index.js';
import { silentLogger, type Logger } from '../log/logger.js';
import { startKubesim, type Kubesim } from '../kubesim/index.js';
import { startMockApi, type MockApi } from '../mock/server.js';
import { startEchoUpstream } from './echo-upstream.js';

export interface DemoOptions {
  host?: string;
  kubeconfigPath: string;
  logger?: Logger;
}

export interface Demo {
  api: MockApi;
  kubesim: Kubesim;
  apiKey: string;
  authtoken: string;
  kubeconfigPath: string;
  /** The example endpoint the demo creates, served by a local echo upstream. */
  exampleEndpoint: { id: string; url: string; upstreamUrl: string };
  stop(): Promise<void>;
}

export const DEMO_NAMESPACE = 'demo';
export const DEMO_ENDPOINT_URL = `tcp://echo.${DEMO_NAMESPACE}:7000`;

/**
 * The embedded default environment: the mock management API with its admin interface and
 * binding ingress, kubesim with a kubeconfig on disk, and one example cluster-bound endpoint
 * (`tcp://echo.demo:7000`) whose upstream is a local echo server.
 */
export async function startDemo(opts: DemoOptions): Promise<Demo> {
  const host = opts.host ?? '127.0.0.1';
  const logger = opts.logger ?? silentLogger();
  const api = await startMockApi({
    host,
    admin: { host },
    ingress: { host },
    logger: logger.child({ component: 'mock-api' }),
  });
  const stops: (() => Promise<void>)[] = [() => api.stop()];
  try {
    const kubesim = await startKubesim({
      host,
      initialNamespaces: ['default', 'kube-system', DEMO_NAMESPACE],
      tls: true,
      logger: logger.child({ component: 'kubesim' }),
    });
    stops.push(() => kubesim.stop());
    await mkdir(dirname(opts.kubeconfigPath), { recursive: true });
    await kubesim.writeKubeconfig(opts.kubeconfigPath);

    const echo = await startEchoUpstream(host);
    stops.push(() => echo.stop());
    const account = api.accounts[0]!;
    const apiKey = account.api_keys[0]!;
    const client = new ManagementClient({ baseUrl: api.url, apiKey });
    const endpoint = await client.endpoints.create({
      url: DEMO_ENDPOINT_URL,
      bindings: ['kubernetes'],
      description: 'demo: echo service',
      upstream_url: echo.url,
    });
    await client.close();

    return {
      api,
      kubesim,
      apiKey,
      authtoken: account.authtokens[0] ?? '',
      kubeconfigPath: opts.kubeconfigPath,
      exampleEndpoint: { id: endpoint.id, url: endpoint.url, upstreamUrl: echo.url },
      async stop() {
        for (const stop of stops.reverse()) await stop();
      },
    };
  } catch (err) {
    for (const stop of stops.reverse()) await stop();
    throw err;
  }
}
