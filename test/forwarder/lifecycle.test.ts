import { createServer, type Server } from 'node:net';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { metricValue } from '../kube/helpers.js';
import { readAll, waitFor } from '../ingress/helpers.js';
import {
  connectMaybeReset,
  connectTo,
  createService,
  deleteService,
  endpoint,
  freePort,
  internalService,
  logLines,
  roundTrip,
  tryConnect,
  useEnv,
} from './helpers.js';

describe('forwarder listeners follow the internal Services', () => {
  const setup = useEnv();

  it('binds a listener when a Service appears and closes it when the Service is deleted', async () => {
    const env = await setup();
    await endpoint(env, 'tcp://life.x:8000', env.echo.upstreamUrl);
    const fwd = await env.start({ drain: { timeoutSeconds: 5 } });
    await waitFor(() => fwd.readiness().ready, 10_000);
    expect(fwd.boundPorts()).toEqual([]);
    const port = await freePort();
    await createService(env.sim, internalService('ep-life', { [port]: 'tcp://life.x:8000' }));
    await waitFor(() => fwd.boundPorts().includes(port), 10_000);
    const open = await connectTo(port);
    expect(await roundTrip(open, 'before delete')).toBe('before delete');
    const ended = readAll(open, 15_000);

    await deleteService(env.sim, 'ep-life');
    await waitFor(() => !fwd.boundPorts().includes(port), 10_000);
    // Stops accepting at once ...
    expect(await tryConnect(port)).toBe('ECONNREFUSED');
    // ... while the open connection keeps working during its drain time,
    expect(await roundTrip(open, 'during drain')).toBe('during drain');
    // ... and is closed when that time is over.
    await ended;
    open.destroy();
    await waitFor(() => logLines(env, 'forwarder connection').length === 1, 10_000);
    expect(logLines(env, 'forwarder connection')[0]).toMatchObject({ port, outcome: 'removed' });
    expect(fwd.listeners()).toEqual([]);
  });

  it('reports a port it cannot bind in /readyz, retries, and becomes ready once it is free', async () => {
    const env = await setup();
    const squatter: Server = createServer();
    await new Promise<void>((r) => squatter.listen(0, '127.0.0.1', r));
    const port = (squatter.address() as { port: number }).port;
    const fwd = await env.start();
    await createService(env.sim, internalService('ep-busy', { [port]: 'tcp://busy.x:8100' }));
    await waitFor(() => fwd.listeners().some((l) => l.state === 'failed'), 10_000);
    const res = await request(`http://${fwd.httpAddress.address}/readyz`);
    expect(res.statusCode).toBe(503);
    const body = (await res.body.json()) as { ready: boolean; reasons: string[] };
    expect(body.ready).toBe(false);
    expect(body.reasons.join('\n')).toContain(`port ${port} (tcp://busy.x:8100) failed`);
    expect(body.reasons.join('\n')).toContain('EADDRINUSE');
    expect(await metricValue(fwd.registry, 'endpoint_binder_forwarder_ready')).toBe(0);

    await new Promise<void>((r) => squatter.close(() => r()));
    await waitFor(() => fwd.readiness().ready, 15_000);
    expect(fwd.boundPorts()).toEqual([port]);
    expect(await metricValue(fwd.registry, 'endpoint_binder_forwarder_ready')).toBe(1);
    expect(logLines(env, 'forwarder listener failed').length).toBeGreaterThan(0);
  });

  it('skips a port listed with two URLs and a Service with a malformed ports annotation', async () => {
    const env = await setup();
    const fwd = await env.start();
    const [a, b] = [await freePort(), await freePort()];
    await createService(
      env.sim,
      internalService('ep-one', { [a]: 'tcp://one.x:1', [b]: 'tcp://shared.x:2' }),
    );
    await createService(env.sim, internalService('ep-two', { [b]: 'tcp://other.x:3' }));
    const bad = internalService('ep-bad', { [await freePort()]: 'tcp://bad.x:4' });
    bad.metadata.annotations!['endpoint-binder.io/ports'] = '{"12x":"tcp://x.y:1"}';
    await createService(env.sim, bad);
    await waitFor(() => fwd.boundPorts().includes(a), 10_000);
    await waitFor(() => logLines(env, 'forwarder skipped service').length >= 2, 10_000);
    expect(fwd.boundPorts()).toEqual([a]);
    const problems = logLines(env, 'forwarder skipped service');
    expect(problems.find((p) => p['kind'] === 'port-conflict')).toMatchObject({ port: b });
    expect(problems.find((p) => p['kind'] === 'ports-annotation')).toMatchObject({
      service: 'endpoint-binder/ep-bad',
    });
    expect(fwd.readiness().ready).toBe(true);
  });

  it('ignores Services of another install and of other roles', async () => {
    const env = await setup();
    const fwd = await env.start();
    const [mine, theirs] = [await freePort(), await freePort()];
    await createService(
      env.sim,
      internalService(
        'ep-theirs',
        { [theirs]: 'tcp://t.x:1' },
        {
          release: 'other',
          operatorNamespace: 'endpoint-binder',
        },
      ),
    );
    await createService(env.sim, internalService('ep-mine', { [mine]: 'tcp://m.x:1' }));
    await waitFor(() => fwd.boundPorts().includes(mine), 10_000);
    expect(fwd.boundPorts()).toEqual([mine]);
  });
});

describe('forwarder connection caps', () => {
  const setup = useEnv();

  it('turns away connections over limits.maxConnectionsPerPort and accepts again below it', async () => {
    const env = await setup();
    await endpoint(env, 'tcp://cap.x:8200', env.echo.upstreamUrl);
    const fwd = await env.start({ limits: { maxConnectionsPerPort: 2, maxConnections: 10 } });
    const port = await freePort();
    await createService(env.sim, internalService('ep-cap', { [port]: 'tcp://cap.x:8200' }));
    await waitFor(() => fwd.boundPorts().includes(port), 10_000);
    const a = await connectTo(port);
    const b = await connectTo(port);
    expect(await roundTrip(a, 'a')).toBe('a');
    expect(await roundTrip(b, 'b')).toBe('b');
    // Turned away with a reset at once, which can even beat the client's own connect event.
    const c = connectMaybeReset(port);
    expect((await readAll(c)).length).toBe(0);
    c.destroy();
    await waitFor(() => logLines(env, 'forwarder connection').length === 1, 10_000);
    expect(logLines(env, 'forwarder connection')[0]).toMatchObject({ outcome: 'limit' });
    expect(String(logLines(env, 'forwarder connection')[0]!['error'])).toContain('maxConnectionsPerPort');

    a.destroy();
    await waitFor(() => fwd.openConnections() === 1, 10_000);
    const d = await connectTo(port);
    expect(await roundTrip(d, 'd')).toBe('d');
    b.destroy();
    d.destroy();
  });

  it('turns away connections over limits.maxConnections across ports', async () => {
    const env = await setup();
    await endpoint(env, 'tcp://total.x:8300', env.echo.upstreamUrl);
    await endpoint(env, 'tcp://total.x:8301', env.echo.upstreamUrl);
    const fwd = await env.start({ limits: { maxConnectionsPerPort: 1, maxConnections: 1 } });
    const [p1, p2] = [await freePort(), await freePort()];
    await createService(
      env.sim,
      internalService('ep-total', { [p1]: 'tcp://total.x:8300', [p2]: 'tcp://total.x:8301' }),
    );
    await waitFor(() => fwd.boundPorts().length === 2, 10_000);
    const a = await connectTo(p1);
    expect(await roundTrip(a, 'a')).toBe('a');
    const b = connectMaybeReset(p2);
    expect((await readAll(b)).length).toBe(0);
    b.destroy();
    await waitFor(() => logLines(env, 'forwarder connection').length === 1, 10_000);
    expect(String(logLines(env, 'forwarder connection')[0]!['error'])).toContain('limits.maxConnections (1)');
    a.destroy();
  });
});

describe('forwarder shutdown (the SIGTERM sequence, in-process)', () => {
  const setup = useEnv();

  it('turns unready at once, keeps accepting during the delay, then drains and closes what is left', async () => {
    const env = await setup();
    await endpoint(env, 'tcp://drain.x:8400', env.echo.upstreamUrl);
    const fwd = await env.start({ drain: { delaySeconds: 3, timeoutSeconds: 5 } });
    const port = await freePort();
    await createService(env.sim, internalService('ep-drain', { [port]: 'tcp://drain.x:8400' }));
    await waitFor(() => fwd.readiness().ready && fwd.boundPorts().includes(port), 10_000);
    const finishes = await connectTo(port);
    const lingers = await connectTo(port);
    expect(await roundTrip(finishes, '1')).toBe('1');
    expect(await roundTrip(lingers, '2')).toBe('2');
    const lingersClosed = readAll(lingers, 20_000);

    let stopped = false;
    const done = fwd.shutdown().then(() => (stopped = true));
    // Unready at once, /readyz says why.
    expect(fwd.readiness()).toEqual({ ready: false, reasons: ['shutting down'] });
    // Still accepting during the delay.
    const late = await connectTo(port);
    expect(await roundTrip(late, 'late')).toBe('late');
    const ready = await request(`http://${fwd.httpAddress.address}/readyz`);
    expect(ready.statusCode).toBe(503);
    await ready.body.text();
    late.end();
    await readAll(late);
    late.destroy();
    // Then it stops accepting; open connections still flow.
    await waitFor(() => logLines(env, 'forwarder stopped accepting').length === 1, 10_000);
    expect(await tryConnect(port)).toBe('ECONNREFUSED');
    expect(await roundTrip(finishes, 'still here')).toBe('still here');
    expect(stopped).toBe(false);
    finishes.end();
    await readAll(finishes);
    finishes.destroy();
    // The one that never ends is closed at the end of drain.timeoutSeconds.
    await lingersClosed;
    lingers.destroy();
    await done;
    const outcomes = logLines(env, 'forwarder connection').map((l) => l['outcome']);
    expect(outcomes.sort()).toEqual(['closed', 'closed', 'shutdown']);
    expect(env.logs.lines.map((l) => l['msg']).filter((m) => String(m).startsWith('forwarder st'))).toEqual([
      'forwarder started',
      'forwarder stopped accepting',
      'forwarder stopped',
    ]);
  });
});
