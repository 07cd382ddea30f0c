import { spawn } from 'node:child_process';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runCli } from '../../src/cli/run.js';
import { resolveControllerConfig } from '../../src/controller/config.js';
import { startController, type Controller } from '../../src/controller/controller.js';
import type { Forwarder } from '../../src/forwarder/forwarder.js';
import { KubeTransport } from '../../src/kube/index.js';
import { startKubesim, type Kubesim, type PodRunner } from '../../src/kubesim/index.js';
import { silentLogger } from '../../src/log/logger.js';
import { captured } from '../helpers/capture-io.js';
import { startLoopbackForwarder } from '../helpers/loopback-forwarder.js';
import { ACME_KEY, startTestMock, type TestMock } from '../helpers/mock-api.js';
import { fastTuning } from '../kube/helpers.js';
import { connectTo, roundTrip } from '../forwarder/helpers.js';
import { OPERATOR_NS, eventually } from './env.js';
import { budget } from '../helpers/budget.js';

/**
 * Issue #27 item 5 / #29 item 4: `endpoint-binder status` shows each endpoint's data path with no
 * flag. The controller lists this install's forwarder pods (kubesim's kubelet runs them, each at
 * its own 127.x pod IP) and reads each one's /status on its `http` port: one pod relays to a real
 * forwarder, one runs but does not listen, one is never scheduled. Before, the column appeared
 * only with --forwarder-url and the controller's /status carried no data path at all.
 */

/** A pod's process: relays its `http` port to TARGET (the real forwarder's HTTP server), or listens on nothing. */
const POD = `
const net = require('node:net');
const target = process.env.TARGET;
if (target) {
  const [host, port] = target.split(':');
  net.createServer((c) => {
    const u = net.connect(Number(port), host);
    c.pipe(u); u.pipe(c);
    c.on('error', () => u.destroy()); u.on('error', () => c.destroy());
  }).listen(Number(process.env.PORT), process.env.POD_IP);
} else setInterval(() => {}, 1 << 30);
process.on('SIGTERM', () => process.exit(0));
`;

const runner: PodRunner = (ctx) =>
  spawn(process.execPath, ['-e', POD], {
    env: {
      ...ctx.container.env,
      POD_IP: ctx.podIP,
      PORT: String(ctx.container.ports.find((p) => p.name === 'http')?.containerPort ?? 0),
    },
    stdio: 'ignore',
  });

const forwarderLabels = {
  'app.kubernetes.io/name': 'endpoint-binder',
  'app.kubernetes.io/instance': 'endpoint-binder',
  'app.kubernetes.io/component': 'forwarder',
};

function pod(name: string, opts: { target?: string; scheduled: boolean }) {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: OPERATOR_NS, labels: forwarderLabels },
    spec: {
      ...(opts.scheduled ? { nodeName: 'kubesim' } : {}),
      terminationGracePeriodSeconds: 1,
      containers: [
        {
          name: 'forwarder',
          image: 'endpoint-binder',
          ports: [{ name: 'http', containerPort: 8081 }],
          env: opts.target ? [{ name: 'TARGET', value: opts.target }] : [],
        },
      ],
    },
  };
}

describe('the controller gathers the data path from the forwarder pods; status shows it without flags', () => {
  let mock: TestMock;
  let sim: Kubesim;
  let ctl: Controller;
  let fwd: Forwarder;
  let echo: Server;
  let id = '';
  let port = 0;
  // Below the ephemeral range (32768-60999 on Linux): a port a client connection holds cannot be bound.
  const base = 10_000 + Math.floor(Math.random() * 40) * 250;

  beforeAll(async () => {
    mock = await startTestMock({ ingress: { host: '127.0.0.1' } });
    sim = await startKubesim({
      initialNamespaces: ['default', 'kube-system', OPERATOR_NS, 'prod'],
      podRunner: runner,
      podStopGraceMs: 500,
    });
    echo = createServer((s) => {
      s.on('error', () => s.destroy());
      s.pipe(s);
    });
    await new Promise<void>((r) => echo.listen(0, '127.0.0.1', r));
    const cfg = resolveControllerConfig(
      {
        api: { baseUrl: mock.url },
        operatorNamespace: OPERATOR_NS,
        http: { listen: '127.0.0.1:0' },
        bindings: { portRange: { min: base, max: base + 249 } },
        leaderElection: { enabled: false },
      },
      { ENDPOINT_BINDER_API_KEY: ACME_KEY },
    );
    if (!cfg.ok) throw new Error(cfg.errors.join('\n'));
    ctl = await startController({
      config: cfg.config,
      kubeConfig: sim.kubeConfig(),
      logger: silentLogger(),
      cacheTuning: { ...fastTuning, pageSize: 500 },
      poll: { initialMs: 100, maxMs: 500 },
      dataPath: { intervalMs: 200 },
    });
    fwd = await startLoopbackForwarder(sim.kubeConfig());
    const kube = new KubeTransport(sim.kubeConfig());
    const { address } = fwd.httpAddress;
    for (const p of [
      pod('fwd-live', { target: address, scheduled: true }),
      pod('fwd-dead', { scheduled: true }),
      pod('fwd-pending', { scheduled: false }),
    ])
      await kube.send({ method: 'POST', path: `/api/v1/namespaces/${OPERATOR_NS}/pods`, body: p });
    const ep = await mock.client.endpoints.create({
      url: 'tcp://live.prod:7000',
      bindings: ['kubernetes'],
      upstream_url: `tcp://127.0.0.1:${(echo.address() as AddressInfo).port}`,
    });
    id = ep.id;
    port = await eventually(() => ctl.status().endpoints.find((e) => e.id === id)?.targetPort, 'target port');
    await eventually(() => fwd.boundPorts().includes(port), 'forwarder listens');
    await eventually(() => ctl.status().counts['projected'] === 1, 'projected');
  }, budget(60_000));

  afterAll(async () => {
    vi.restoreAllMocks();
    await fwd?.stop();
    await ctl?.stop();
    await mock?.close();
    await sim?.stop();
    echo?.close();
  }, budget(30_000));

  /** `status --url <controller>`, nothing else, until `until` holds for its output. */
  const statusUntil = async (args: string[], until: (out: string) => boolean): Promise<string> => {
    let last = '';
    await eventually(
      async () => {
        const io = captured();
        const code = await runCli(['status', '--url', ctl.url, ...args]);
        vi.restoreAllMocks();
        expect(code, io.err()).toBe(0);
        last = io.out();
        return until(last) ? true : undefined;
      },
      'status output',
      20_000,
    ).catch((err: unknown) => {
      throw new Error(`${String(err)}; last status output:\n${last}`);
    });
    return last;
  };

  it('shows the DATA PATH column with the forwarder pods read, before any traffic', async () => {
    const out = await statusUntil([], (o) => /no traffic yet/.test(o));
    expect(out).toMatch(/REASON\s+DATA PATH/);
    expect(out).toMatch(new RegExp(`${id}\\s.*projected.*no traffic yet \\(1 of 2 forwarders read\\)`));
  });

  it('shows a connection through the forwarder as ok, and each pod it could not read as unknown with the reason', async () => {
    const s = await connectTo(port);
    expect(await roundTrip(s, 'ping')).toBe('ping');
    s.destroy();
    const out = await statusUntil([], (o) => new RegExp(`${id}\\s.*ok \\d+s ago`).test(o));
    expect(out).toMatch(new RegExp(`${id}\\s.*ok \\d+s ago \\(1 of 2 forwarders read\\)`));
    expect(out).toMatch(/data path: forwarder pod fwd-dead unknown \(ECONNREFUSED\)/);
    // A pod that never ran holds no connection: named, but not counted among those to read.
    expect(out).toContain(
      'data path: forwarder pod fwd-pending not running (the pod is Pending, not Running)',
    );
    expect(out).not.toMatch(/forwarder pod fwd-live unknown/);
    const metrics = await (await request(`${ctl.url}/metrics`)).body.text();
    expect(metrics).toContain('endpoint_binder_data_path_forwarders{read="true"} 1');
    expect(metrics).toContain('endpoint_binder_data_path_forwarders{read="false"} 2');
  });

  it('the JSON names every forwarder pod, read or not, with its address', async () => {
    const out = await statusUntil(['-o', 'json'], (o) => o.includes('"read": true'));
    const doc = JSON.parse(out) as {
      dataPath: { forwarders: { name: string; url?: string; read: boolean; problem?: string }[] };
      endpoints: { id: string; dataPath?: string }[];
    };
    const byName = new Map(doc.dataPath.forwarders.map((f) => [f.name, f]));
    expect(byName.get('pod fwd-live')).toMatchObject({ read: true, ready: true });
    expect(byName.get('pod fwd-live')?.url).toMatch(/^http:\/\/127\.\d+\.\d+\.\d+:8081\/status$/);
    expect(byName.get('pod fwd-dead')).toMatchObject({ read: false, problem: 'ECONNREFUSED' });
    expect(byName.get('pod fwd-pending')).toEqual({
      name: 'pod fwd-pending',
      read: false,
      problem: 'the pod is Pending, not Running',
      running: false,
    });
    expect(doc.endpoints.find((e) => e.id === id)?.dataPath).toMatch(
      /^ok \d+s ago \(1 of 2 forwarders read\)$/,
    );
  });
});
