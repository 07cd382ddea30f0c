import { mkdir, writeFile } from 'node:fs/promises';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { stringify as toYaml } from 'yaml';
import { ManagementClient } from '../api/client/index.js';
import { ALIASES_LABEL } from '../binding/namespace-policy.js';
import { resolveControllerConfig } from '../controller/config.js';
import { startController, type Controller } from '../controller/controller.js';
import { staticForwarderSource } from '../controller/forwarder-health.js';
import { ForwarderConfig } from '../forwarder/config.js';
import { startForwarder, type Forwarder } from '../forwarder/forwarder.js';
import { KubeClient, kinds } from '../kube/index.js';
import { silentLogger, type Logger } from '../log/logger.js';
import { startKubesim, type Kubesim } from '../kubesim/index.js';
import { startMockApi, type MockApi } from '../mock/server.js';
import { createControllerAccount } from './controller-account.js';
import { startEchoUpstream } from './echo-upstream.js';

export interface DemoOptions {
  host?: string;
  kubeconfigPath: string;
  logger?: Logger;
  /** Called as each part comes up, for progress output. */
  progress?: (line: string) => void;
}

export interface Demo {
  api: MockApi;
  kubesim: Kubesim;
  controller: Controller;
  forwarder: Forwarder;
  client: ManagementClient;
  apiKey: string;
  authtoken: string;
  kubeconfigPath: string;
  /** The controller's config file (next to the kubeconfig): what `check --config` reads. */
  configPath: string;
  upstreams: { http: string; tcp: string };
  stop(): Promise<void>;
}

export const OPERATOR_NAMESPACE = 'endpoint-binder';
export const DEMO_NAMESPACE = 'demo';
/** A tenant's namespace labelled `endpoint-binder.io/aliases: disabled`: closed to aliases. */
export const OPTED_OUT_NAMESPACE = 'quiet';
/** The selector the demo's controller runs with: every endpoint outside the `private` namespace. */
export const DEMO_SELECTOR = "endpoint.namespace != 'private'";

/** A small HTTP app standing in for an account's web service behind an endpoint. */
async function startHttpUpstream(host: string): Promise<{ url: string; stop(): Promise<void> }> {
  const server: HttpServer = createHttpServer((req, res) => {
    res.setHeader('content-type', 'text/plain');
    res.end(`hello from the demo web upstream: ${req.method} ${req.url} (Host: ${req.headers.host ?? ''})\n`);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * The embedded default environment on loopback: the mock management API with its admin
 * interface and binding ingress, kubesim (TLS, kubeconfig on disk), an HTTP and a TCP upstream,
 * the controller and the forwarder — everything a cluster install runs, in one process.
 */
export async function startDemo(opts: DemoOptions): Promise<Demo> {
  const host = opts.host ?? '127.0.0.1';
  const logger = opts.logger ?? silentLogger();
  const say = opts.progress ?? (() => undefined);
  const stops: (() => Promise<void>)[] = [];
  try {
    const api = await startMockApi({
      host,
      admin: { host },
      ingress: { host },
      logger: logger.child({ component: 'mock-api' }),
    });
    stops.push(() => api.stop());
    say(`mock management API    ${api.url} (binding ingress ${api.ingressAddress ?? '-'})`);

    const kubesim = await startKubesim({
      host,
      initialNamespaces: ['default', 'kube-system', OPERATOR_NAMESPACE, DEMO_NAMESPACE, 'private'],
      tls: true,
      logger: logger.child({ component: 'kubesim' }),
    });
    stops.push(() => kubesim.stop());
    await new KubeClient(kubesim.kubeConfig()).create(kinds.namespace, {
      metadata: { name: OPTED_OUT_NAMESPACE, labels: { [ALIASES_LABEL]: 'disabled' } },
    });
    await mkdir(dirname(opts.kubeconfigPath), { recursive: true });
    await kubesim.writeKubeconfig(opts.kubeconfigPath);
    say(`kubesim                ${kubesim.url} (kubeconfig ${opts.kubeconfigPath})`);

    const echo = await startEchoUpstream(host);
    stops.push(() => echo.stop());
    const web = await startHttpUpstream(host);
    stops.push(() => web.stop());
    say(`upstreams              web ${web.url}, echo ${echo.url}`);

    const mockAccount = api.accounts[0]!;
    const apiKey = mockAccount.api_keys[0]!;
    const authtoken = mockAccount.authtokens[0] ?? '';
    const client = new ManagementClient({ baseUrl: api.url, apiKey });
    stops.push(() => client.close());

    const input = {
      api: { baseUrl: api.url },
      operatorNamespace: OPERATOR_NAMESPACE,
      bindings: { endpointSelector: DEMO_SELECTOR },
      http: { listen: `${host}:0` },
    };
    const cfg = resolveControllerConfig(input, { ENDPOINT_BINDER_API_KEY: apiKey });
    if (!cfg.ok) throw new Error(`demo controller config: ${cfg.errors.join('; ')}`);
    // The same settings in a file, so `endpoint-binder check --config` judges this very install.
    const configPath = join(dirname(opts.kubeconfigPath), 'demo-controller.yaml');
    await writeFile(configPath, toYaml(input));
    const account = await createControllerAccount(kubesim.kubeConfig(), {
      namespace: OPERATOR_NAMESPACE,
      release: cfg.config.releaseName,
    });
    // The forwarder here is in this process, not a pod: the controller reads its /status at its
    // HTTP address (known once it has started), the way it reads each forwarder pod's in a cluster.
    const forwarderUrls: string[] = [];
    const controller = await startController({
      config: cfg.config,
      kubeConfig: kubesim.kubeConfig(kubesim.serviceAccountToken(OPERATOR_NAMESPACE, account)),
      logger: logger.child({ component: 'controller' }),
      dataPath: { source: staticForwarderSource(() => forwarderUrls), intervalMs: 1_000 },
    });
    stops.push(() => controller.stop());
    say(`controller             ${controller.url} (selector: ${DEMO_SELECTOR})`);

    const forwarder = await startForwarder({
      config: ForwarderConfig.parse({
        releaseName: cfg.config.releaseName,
        operatorNamespace: OPERATOR_NAMESPACE,
        listenHost: host,
        ingress: { tls: false },
        http: { listen: `${host}:0` },
        drain: { delaySeconds: 0, timeoutSeconds: 2 },
      }),
      authtoken,
      kubeConfig: kubesim.kubeConfig(),
      logger: logger.child({ component: 'forwarder' }),
    });
    stops.push(() => forwarder.stop());
    forwarderUrls.push(`http://${forwarder.httpAddress.address}`);
    say(`forwarder              http://${forwarder.httpAddress.address} (listens on the allocated ports)`);

    return {
      api,
      kubesim,
      controller,
      forwarder,
      client,
      apiKey,
      authtoken,
      kubeconfigPath: opts.kubeconfigPath,
      configPath,
      upstreams: { http: web.url, tcp: echo.url },
      async stop() {
        for (const stop of stops.reverse()) await stop().catch(() => undefined);
      },
    };
  } catch (err) {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    throw err;
  }
}
