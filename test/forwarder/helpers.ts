import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Clock } from '../../src/time/clock.js';
import { connect, type Socket } from 'node:net';
import { afterEach } from 'vitest';
import { parseEndpointUrl } from '../../src/binding/endpoint-url.js';
import type { InstallIdentity } from '../../src/binding/identity.js';
import { installRecordConfigMap, type InstallRecord } from '../../src/binding/ownership/index.js';
import { internalService as buildInternalService } from '../../src/binding/services.js';
import { ForwarderConfig, type ForwarderConfigInput } from '../../src/forwarder/config.js';
import { startForwarder, type Forwarder } from '../../src/forwarder/forwarder.js';
import type { IngressProtocol } from '../../src/forwarder/upstream.js';
import type { Service } from '../../src/kube/objects.js';
import { startKubesim, type Kubesim } from '../../src/kubesim/index.js';
import { captureLogs, type CapturedLogs } from '../helpers/logs.js';
import { ACME_AUTHTOKEN, startTestMock, type TestMock } from '../helpers/mock-api.js';
import { createEndpoint, startEcho, type TestServer } from '../ingress/helpers.js';
import { api } from '../kubesim/helpers.js';

export const RELEASE = 'eb';
export const NS = 'endpoint-binder';
export const IDENTITY: InstallIdentity = { release: RELEASE, operatorNamespace: NS };
export const AUTHTOKEN = ACME_AUTHTOKEN;

/** The binding ingress protocols the defect tests run over (#27: each defect over v1 and v2). */
export const PROTOCOLS: readonly IngressProtocol[] = ['v1', 'v2'];

/**
 * An internal Service built by the projection core's own builder, so these tests read exactly what
 * the controller writes. `ports`: allocated forwarder port → canonical URL.
 */
export function internalService(
  name: string,
  ports: Record<number, string>,
  identity: InstallIdentity = IDENTITY,
): Service {
  const groupPorts = Object.entries(ports).map(([port, url]) => {
    const parsed = parseEndpointUrl(url);
    if (!parsed.ok) throw new Error(`${url}: ${parsed.message}`);
    return { url: parsed.value, forwarderPort: Number(port) };
  });
  return buildInternalService({
    name,
    endpointId: name.replace(/-/g, '_'),
    url: groupPorts[0]!.url,
    state: 'projected',
    reason: '',
    groupPorts,
    config: {
      identity,
      clusterDomain: 'cluster.local',
      portRange: { min: 1024, max: 65535 },
      serviceLabels: {},
      serviceAnnotations: {},
    },
  });
}

const servicesPath = (ns: string) => `/api/v1/namespaces/${ns}/services`;
const configMapsPath = (ns: string) => `/api/v1/namespaces/${ns}/configmaps`;

/**
 * Writes the install record as the controller does (same builder): the ConfigMap `<release>-install`
 * naming the ingress. Replaces it when it exists.
 */
export async function writeInstallRecord(
  sim: Kubesim,
  record: InstallRecord,
  identity: InstallIdentity = IDENTITY,
): Promise<void> {
  const cm = installRecordConfigMap(identity, record);
  const path = configMapsPath(identity.operatorNamespace);
  const cur = await api(sim, 'GET', `${path}/${cm.metadata.name}`);
  const r =
    cur.status === 200
      ? await api(sim, 'PUT', `${path}/${cm.metadata.name}`, {
          ...cm,
          metadata: { ...cm.metadata, resourceVersion: cur.body.metadata.resourceVersion },
        })
      : await api(sim, 'POST', path, cm);
  if (r.status !== 200 && r.status !== 201)
    throw new Error(`install record: ${r.status} ${JSON.stringify(r.body)}`);
}

export async function createService(sim: Kubesim, svc: Service): Promise<void> {
  const r = await api(sim, 'POST', servicesPath(svc.metadata.namespace ?? NS), svc);
  if (r.status !== 201) throw new Error(`create ${svc.metadata.name}: ${r.status} ${JSON.stringify(r.body)}`);
}

/** Replaces the Service's metadata annotations (read-modify-write with its resourceVersion). */
export async function setAnnotations(
  sim: Kubesim,
  name: string,
  annotations: Record<string, string | null>,
  ns = NS,
): Promise<void> {
  const cur = await api(sim, 'GET', `${servicesPath(ns)}/${name}`);
  const obj = cur.body;
  const next: Record<string, string> = { ...obj.metadata.annotations };
  for (const [k, v] of Object.entries(annotations)) {
    if (v === null) delete next[k];
    else next[k] = v;
  }
  obj.metadata.annotations = next;
  const r = await api(sim, 'PUT', `${servicesPath(ns)}/${name}`, obj);
  if (r.status !== 200) throw new Error(`update ${name}: ${r.status} ${JSON.stringify(r.body)}`);
}

export async function deleteInstallRecord(sim: Kubesim, identity: InstallIdentity = IDENTITY): Promise<void> {
  const r = await api(
    sim,
    'DELETE',
    `${configMapsPath(identity.operatorNamespace)}/${identity.release}-install`,
  );
  if (r.status !== 200 && r.status !== 404) throw new Error(`delete install record: ${r.status}`);
}

export async function deleteService(sim: Kubesim, name: string, ns = NS): Promise<void> {
  const r = await api(sim, 'DELETE', `${servicesPath(ns)}/${name}`);
  if (r.status !== 200) throw new Error(`delete ${name}: ${r.status}`);
}

/** A loopback port that was free a moment ago (the allocated forwarder port of a test). */
export { freePort, freePorts } from '../../bench/support/load.js';

export async function connectTo(port: number): Promise<Socket> {
  const s = connect({ host: '127.0.0.1', port, allowHalfOpen: true });
  await new Promise<void>((resolve, reject) => {
    s.once('connect', resolve);
    s.once('error', reject);
  });
  s.on('error', () => undefined);
  return s;
}

/** A client socket for a connection the forwarder may reset at once (errors are expected and ignored). */
export function connectMaybeReset(port: number): Socket {
  const s = connect({ host: '127.0.0.1', port, allowHalfOpen: true });
  s.on('error', () => undefined);
  return s;
}

/** Resolves with the connect error code (ECONNREFUSED) or 'connected'. */
export async function tryConnect(port: number): Promise<string> {
  return new Promise((resolve) => {
    const s = connect({ host: '127.0.0.1', port });
    s.once('connect', () => {
      s.destroy();
      resolve('connected');
    });
    s.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
}

/** Writes `data` and reads exactly as many bytes back (an echo round trip). */
export async function roundTrip(s: Socket, data: string, timeoutMs = 10_000): Promise<string> {
  const want = Buffer.byteLength(data);
  return new Promise((resolve, reject) => {
    let got = '';
    const timer = setTimeout(() => reject(new Error(`round trip: got ${JSON.stringify(got)}`)), timeoutMs);
    const onData = (c: Buffer) => {
      got += c.toString('utf8');
      if (Buffer.byteLength(got) >= want) {
        clearTimeout(timer);
        s.off('data', onData);
        resolve(got);
      }
    };
    s.on('data', onData);
    s.write(data);
  });
}

export interface Env {
  sim: Kubesim;
  mock: TestMock;
  /** The mock's ingress address. */
  ingress: string;
  echo: TestServer;
  logs: CapturedLogs;
  /** The mock API's and ingress's own log lines (e.g. `ingress connection`). */
  mockLogs: CapturedLogs;
  forwarders: Forwarder[];
  /** Starts a forwarder against this kubesim (test defaults: loopback, plain TCP, fast drain). */
  start(overrides?: Partial<ForwarderConfigInput>, extra?: { clock?: Clock }): Promise<Forwarder>;
}

/** kubesim + mock API with its ingress + a loopback echo upstream, torn down after each test. */
export function useEnv(
  mockOpts: {
    ingressTls?: boolean;
    /** Write the install record with the mock's ingress address, as the controller would; default true. */
    installRecord?: boolean;
    /** Extra settings of the mock's ingress (caps, timeouts). */
    ingress?: Record<string, unknown>;
    /** The forwarders' default ingress.protocol (v1 or v2 forced; default auto). */
    protocol?: IngressProtocol;
  } = {},
): () => Promise<Env> {
  let env: Env | undefined;
  const extra: (() => Promise<void>)[] = [];
  afterEach(async () => {
    if (!env) return;
    const e = env;
    env = undefined;
    await Promise.all(e.forwarders.map((f) => f.stop()));
    await Promise.all([e.sim.stop(), e.mock.close(), e.echo.close(), ...extra.splice(0).map((f) => f())]);
  });
  return async () => {
    const logs = captureLogs('trace');
    const mockLogs = captureLogs('info');
    const sim = await startKubesim({ bookmarkIntervalMs: 200, initialNamespaces: ['default', NS] });
    const mock = await startTestMock({
      ingress: {},
      logger: mockLogs.logger,
      ...(mockOpts.ingressTls || mockOpts.ingress
        ? {
            config: {
              accounts: [{ id: 'acme', api_keys: ['acme_api_key_0123456789'], authtokens: [AUTHTOKEN] }],
              rate_limit: { requests: 100_000, window_seconds: 60 },
              ingress: { ...(mockOpts.ingressTls ? { tls: true } : {}), ...mockOpts.ingress },
            },
          }
        : {}),
    });
    if (mockOpts.installRecord !== false)
      await writeInstallRecord(sim, { ingressAddress: mock.api.ingressAddress!, operatorId: 'k8sop_test' });
    const echo = await startEcho();
    const forwarders: Forwarder[] = [];
    env = {
      sim,
      mock,
      ingress: mock.api.ingressAddress!,
      echo,
      logs,
      mockLogs,
      forwarders,
      async start(overrides = {}, extra = {}) {
        const config = ForwarderConfig.parse({
          releaseName: RELEASE,
          operatorNamespace: NS,
          listenHost: '127.0.0.1',
          http: { listen: '127.0.0.1:0' },
          ...overrides,
          ingress: {
            tls: false,
            ...(mockOpts.protocol ? { protocol: mockOpts.protocol } : {}),
            ...overrides.ingress,
          },
          drain: { delaySeconds: 0, timeoutSeconds: 5, ...overrides.drain },
        });
        const f = await startForwarder({
          config,
          authtoken: AUTHTOKEN,
          kubeConfig: sim.kubeConfig(),
          logger: logs.logger,
          // The authtoken and CA files are re-read this often besides the directory watch.
          filePollMs: 200,
          ...(extra.clock ? { clock: extra.clock } : {}),
          cacheTuning: {
            backoff: { initialMs: 20, maxMs: 300, jitter: 0.2, resetAfterMs: 5_000 },
            rewatchDelayMs: 20,
            minWatchMs: 100,
          },
        });
        forwarders.push(f);
        return f;
      },
    };
    return env;
  };
}

/** Creates an endpoint in the mock (account acme) whose upstream is `upstreamUrl`. */
export async function endpoint(env: Env, url: string, upstreamUrl: string): Promise<void> {
  await createEndpoint(env.mock, url, { upstream_url: upstreamUrl });
}

/** Lines of the captured log with this msg. */
export function logLines(env: Env, msg: string): Record<string, unknown>[] {
  return env.logs.lines.filter((l) => l['msg'] === msg);
}

/** Starts a forwarder over plain TCP or over TLS to the mock's ingress (its CA written to a file). */
export async function startOver(
  env: Env,
  tls: boolean,
  extra: Partial<ForwarderConfigInput> = {},
): Promise<Forwarder> {
  if (!tls) return env.start(extra);
  const dir = await mkdtemp(join(tmpdir(), 'fwd-ingress-ca-'));
  const caFile = join(dir, 'ca.pem');
  await writeFile(caFile, env.mock.api.ingressCaPem!);
  return env.start({ ...extra, ingress: { ...extra.ingress, tls: true, caFile } });
}
