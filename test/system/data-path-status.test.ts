import { createServer, type AddressInfo, type Server } from 'node:net';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runCli } from '../../src/cli/run.js';
import { ForwarderStatusSchema } from '../../src/forwarder/forwarder-status.js';
import type { Forwarder } from '../../src/forwarder/forwarder.js';
import type { Controller } from '../../src/controller/controller.js';
import { eventually, startEnv, type ControllerEnv } from '../controller/env.js';
import { captured } from '../helpers/capture-io.js';
import { startLoopbackForwarder } from '../helpers/loopback-forwarder.js';
import { connectTo, freePort, roundTrip } from '../forwarder/helpers.js';
import { budget } from '../helpers/budget.js';

/**
 * #19 item 2: the forwarder keeps per-URL data-path health. A live and a dead upstream behind one
 * controller and forwarder: after one connection each, the forwarder's /status and `status
 * --forwarder-url` show `ok` for the live one and the ingress's ERR_730 for the dead one; a
 * forwarder that cannot be read is named. Before, neither /status nor the column existed.
 */
describe('data-path health: forwarder /status and the status DATA PATH column', () => {
  let env: ControllerEnv;
  let ctl: Controller;
  let fwd: Forwarder;
  let tcp: Server;
  // Below the ephemeral range (32768-60999 on Linux): a port a client connection holds cannot be bound.
  const base = 20_000 + Math.floor(Math.random() * 40) * 250;
  const portRange = { min: base, max: base + 249 };
  const ports = { live: 0, dead: 0, idle: 0 };
  const ids = { live: '', dead: '', idle: '' };

  beforeAll(async () => {
    env = await startEnv({ namespaces: ['prod'] });
    tcp = createServer((s) => {
      s.on('error', () => s.destroy());
      s.pipe(s);
    });
    await new Promise<void>((r) => tcp.listen(0, '127.0.0.1', r));
    ctl = await env.startController({ bindings: { portRange } });
    // A refusal is final at once, so the first failed connection is the one recorded.
    fwd = await startLoopbackForwarder(env.sim.kubeConfig(), { maxDialAttempts: 1 });
    const deadPort = await freePort();
    const eps = {
      live: await env.createEndpoint('tcp://live.prod:7000', {
        upstream_url: `tcp://127.0.0.1:${(tcp.address() as AddressInfo).port}`,
      }),
      dead: await env.createEndpoint('tcp://dead.prod:7000', { upstream_url: `tcp://127.0.0.1:${deadPort}` }),
      idle: await env.createEndpoint('tcp://idle.prod:7000', {
        upstream_url: `tcp://127.0.0.1:${(tcp.address() as AddressInfo).port}`,
      }),
    };
    for (const k of ['live', 'dead', 'idle'] as const) {
      ids[k] = eps[k].id;
      const svc = await eventually(() => env.internalOf(eps[k].id), `${k} internal`);
      ports[k] = svc.spec!.ports![0]!.targetPort as number;
    }
    // The forwarder binds once its cache has seen the three Services: slower on a loaded machine
    // than the controller's own writes (a CI run timed out at 18 s), so a longer budget here.
    await eventually(
      () => Object.values(ports).every((p) => fwd.boundPorts().includes(p)),
      'listeners',
      45_000,
    );
    await eventually(() => fwd.readiness().ready, 'forwarder ready');
    await eventually(() => ctl.status().counts['projected'] === 3, 'projected');
  }, budget(60_000));
  afterAll(async () => {
    vi.restoreAllMocks();
    await fwd?.stop();
    await env?.close();
    tcp?.close();
  });

  const forwarderStatus = async () => {
    const res = await request(`http://${fwd.httpAddress.address}/status`);
    expect(res.statusCode).toBe(200);
    return ForwarderStatusSchema.parse(await res.body.json());
  };

  it('shows a dead upstream after the first failed connection, a live one as ok, an unused one as no traffic', async () => {
    const live = await connectTo(ports.live);
    expect(await roundTrip(live, 'ping')).toBe('ping');
    live.destroy();
    const dead = await connectTo(ports.dead);
    dead.write('hello');
    await new Promise<void>((r) => dead.once('close', () => r()));

    const doc = await eventually(async () => {
      const d = await forwarderStatus();
      const row = d.urls.find((u) => u.port === ports.dead);
      return row?.lastFailure ? d : undefined;
    }, 'dead upstream recorded');
    const byPort = new Map(doc.urls.map((u) => [u.port, u]));
    expect(byPort.get(ports.dead)).toMatchObject({
      url: 'tcp://dead.prod:7000',
      failures: 1,
      successes: 0,
      lastFailure: { code: 'ERR_730', title: "The endpoint's upstream refused the connection." },
    });
    expect(byPort.get(ports.dead)!.dataPath).toMatch(/^upstream refused \(ERR_730\) \d+s ago$/);
    expect(byPort.get(ports.live)).toMatchObject({ successes: 1, failures: 0 });
    expect(byPort.get(ports.live)!.dataPath).toMatch(/^ok \d+s ago$/);
    expect(byPort.get(ports.idle)!.dataPath).toBe('no traffic yet');

    const metrics = await (await request(`http://${fwd.httpAddress.address}/metrics`)).body.text();
    expect(metrics).toContain(
      `endpoint_binder_forwarder_url_dials_total{port="${ports.dead}",url="tcp://dead.prod:7000",result="ERR_730"} 1`,
    );
    expect(metrics).toContain(
      `endpoint_binder_forwarder_url_dials_total{port="${ports.live}",url="tcp://live.prod:7000",result="ok"} 1`,
    );
  });

  it('status --forwarder-url prints the DATA PATH column and names a forwarder it cannot read', async () => {
    const closed = `http://127.0.0.1:${await freePort()}`;
    const io = captured();
    const code = await runCli([
      'status',
      '--url',
      ctl.url,
      '--forwarder-url',
      `http://${fwd.httpAddress.address}`,
      '--forwarder-url',
      closed,
    ]);
    const table = io.out();
    vi.restoreAllMocks();
    expect(code).toBe(0);
    expect(table).toMatch(/REASON\s+DATA PATH/);
    expect(table).toMatch(new RegExp(`${ids.dead}\\s.*upstream refused \\(ERR_730\\) \\d+s ago`));
    expect(table).toMatch(new RegExp(`${ids.live}\\s.*ok \\d+s ago`));
    expect(table).toMatch(new RegExp(`${ids.idle}\\s.*no traffic yet`));
    expect(table).toContain(`data path: forwarder ${closed}/status unknown (ECONNREFUSED)`);
  });

  it('status says so when no forwarder can be read', async () => {
    const closed = `http://127.0.0.1:${await freePort()}`;
    const io = captured();
    const code = await runCli(['status', '--url', ctl.url, '--forwarder-url', closed, '-o', 'json']);
    const json = JSON.parse(io.out()) as {
      endpoints: { id: string; dataPath?: string }[];
      dataPath: { forwarders: { name: string; url: string; read: boolean; problem?: string }[] };
    };
    vi.restoreAllMocks();
    expect(code).toBe(0);
    expect(json.dataPath.forwarders).toEqual([
      { name: `${closed}/status`, url: `${closed}/status`, read: false, problem: 'ECONNREFUSED' },
    ]);
    expect(json.endpoints.find((e) => e.id === ids.dead)?.dataPath).toBe('unknown (no forwarder read)');
  });
});
