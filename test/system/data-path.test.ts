import { createHash, randomBytes } from 'node:crypto';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Controller } from '../../src/controller/controller.js';
import { startForwarder, type Forwarder } from '../../src/forwarder/forwarder.js';
import { ForwarderConfig } from '../../src/forwarder/config.js';
import { silentLogger } from '../../src/log/logger.js';
import { OPERATOR_NS, eventually, startEnv, type ControllerEnv } from '../controller/env.js';
import { ACME_AUTHTOKEN } from '../helpers/mock-api.js';
import { connectTo, roundTrip, tryConnect } from '../forwarder/helpers.js';
import { readAll } from '../ingress/helpers.js';

/**
 * The whole path on loopback: mock API + ingress, kubesim, controller, forwarder and two
 * upstreams. Connections go to the port the internal Service's targetPort names, which is where
 * a ClusterIP would send a pod's connection to `name.namespace:port`.
 */
describe('end to end: endpoint → Services → forwarder → ingress → upstream', () => {
  let env: ControllerEnv;
  let ctl: Controller;
  let fwd: Forwarder;
  let http: HttpServer;
  let tcp: Server;
  const base = 20_000 + Math.floor(Math.random() * 40) * 250;
  const portRange = { min: base, max: base + 249 };

  const startFwd = async (): Promise<Forwarder> =>
    startForwarder({
      config: ForwarderConfig.parse({
        releaseName: 'endpoint-binder',
        operatorNamespace: OPERATOR_NS,
        listenHost: '127.0.0.1',
        ingress: { tls: false },
        http: { listen: '127.0.0.1:0' },
        drain: { delaySeconds: 0, timeoutSeconds: 1 },
      }),
      authtoken: ACME_AUTHTOKEN,
      kubeConfig: env.sim.kubeConfig(),
      logger: silentLogger(),
      cacheTuning: { inactivityMs: 5_000, rewatchDelayMs: 20, minWatchMs: 100 },
    });

  beforeAll(async () => {
    env = await startEnv({ namespaces: ['prod'] });
    http = createHttpServer((req, res) =>
      res.end(`upstream saw ${req.method} ${req.url} for ${req.headers.host}`),
    );
    await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
    // Echoes, and on the client's FIN answers with the sha256 of everything it received.
    tcp = createServer({ allowHalfOpen: true }, (s) => {
      const h = createHash('sha256');
      s.on('error', () => s.destroy());
      s.on('data', (c: Buffer) => {
        h.update(c);
        s.write(c);
      });
      s.on('end', () => s.end(`\nsha256:${h.digest('hex')}`));
    });
    await new Promise<void>((r) => tcp.listen(0, '127.0.0.1', r));
    ctl = await env.startController({ bindings: { portRange } });
    fwd = await startFwd();
  });
  afterAll(async () => {
    await fwd?.stop();
    await env?.close();
    http?.close();
    tcp?.close();
  });

  let webPort = 0;
  let echoPort = 0;
  let echoId = '';

  it('projects both endpoints and the forwarder binds their ports', async () => {
    const web = await env.createEndpoint('http://web.prod', {
      upstream_url: `http://127.0.0.1:${(http.address() as AddressInfo).port}`,
    });
    const echo = await env.createEndpoint('tcp://echo.prod:7000', {
      upstream_url: `tcp://127.0.0.1:${(tcp.address() as AddressInfo).port}`,
    });
    echoId = echo.id;
    const iw = await eventually(() => env.internalOf(web.id), 'web internal');
    const ie = await eventually(() => env.internalOf(echo.id), 'echo internal');
    await eventually(() => env.service('prod', 'web'), 'web alias');
    await eventually(() => env.service('prod', 'echo'), 'echo alias');
    webPort = iw.spec!.ports![0]!.targetPort as number;
    echoPort = ie.spec!.ports![0]!.targetPort as number;
    expect(webPort).toBeGreaterThanOrEqual(portRange.min);
    expect(echoPort).toBeLessThanOrEqual(portRange.max);
    await eventually(
      () => fwd.boundPorts().includes(webPort) && fwd.boundPorts().includes(echoPort),
      'listeners',
    );
    await eventually(() => fwd.readiness().ready, 'forwarder ready');
  });

  it('carries an HTTP request to the upstream and back', async () => {
    const res = await request(`http://127.0.0.1:${webPort}/hello?x=1`, { headers: { host: 'web.prod' } });
    expect(res.statusCode).toBe(200);
    expect(await res.body.text()).toBe('upstream saw GET /hello?x=1 for web.prod');
  });

  it('carries a 64 MiB TCP transfer intact and delivers the reply after a half-close', async () => {
    const s = await connectTo(echoPort);
    expect(await roundTrip(s, 'ping')).toBe('ping');
    const sent = createHash('sha256').update('ping');
    const received = readAll(s, 120_000);
    const chunk = randomBytes(1024 * 1024);
    for (let i = 0; i < 64; i++) {
      sent.update(chunk);
      if (!s.write(chunk)) await new Promise((r) => s.once('drain', r));
    }
    s.end(); // half-close: the upstream answers only after our FIN
    const all = await received;
    const text = all.subarray(all.length - 72).toString();
    expect(all.length).toBe(64 * 1024 * 1024 + 72); // the ping's echo was read above
    const expected = createHash('sha256');
    for (let i = 0; i < 64; i++) expected.update(chunk);
    expect(
      createHash('sha256')
        .update(all.subarray(0, 64 * 1024 * 1024))
        .digest('hex'),
    ).toBe(expected.digest('hex'));
    expect(text).toBe(`\nsha256:${sent.digest('hex')}`);
  });

  it('a restarted forwarder binds the same ports', async () => {
    const before = fwd.boundPorts();
    await fwd.stop();
    fwd = await startFwd();
    await eventually(() => fwd.boundPorts().length === before.length, 'rebound');
    expect(fwd.boundPorts()).toEqual(before);
    const s = await connectTo(echoPort);
    expect(await roundTrip(s, 'again')).toBe('again');
    s.destroy();
  });

  it('deleting the endpoint closes its listener and removes both Services', async () => {
    await env.mock.client.endpoints.delete(echoId);
    await eventually(
      async () => !(await env.service('prod', 'echo')) && !(await env.internalOf(echoId)),
      'Services gone',
    );
    await eventually(() => !fwd.boundPorts().includes(echoPort), 'listener closed');
    expect(await tryConnect(echoPort)).toBe('ECONNREFUSED');
    expect(ctl.status().endpoints.map((e) => e.id)).not.toContain(echoId);
  });

  it('answers an http:// client 502 naming the cause and closes cleanly when the ingress is down, never hangs', async () => {
    await env.mock.api.stop();
    const s = await connectTo(webPort);
    s.write('GET / HTTP/1.1\r\nhost: web.prod\r\n\r\n');
    const got = (await readAll(s, 30_000)).toString(); // rejects if the connection is left hanging
    // Nothing of the upstream came back: the forwarder's own 502 with the ERR_7xx code.
    expect(got, got).toMatch(/^HTTP\/1\.1 502 Bad Gateway\r\n/);
    expect(got, got).toMatch(/X-Binding-Error: ERR_7\d\d/i);
  });
});
