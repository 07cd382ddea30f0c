import { connect, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { metricValue } from '../kube/helpers.js';
import { waitFor } from '../ingress/helpers.js';
import { parseHostPort } from '../../src/net/host-port.js';
import {
  connectTo,
  createService,
  endpoint,
  freePort,
  internalService,
  logLines,
  roundTrip,
  useEnv,
} from './helpers.js';
import { budget } from '../helpers/budget.js';

/**
 * Transient refusals are retried (#15 item 5). The ingress takes 3 handshakes at a time from one
 * source address; the test holds all 3 with silent sockets from 127.0.0.1, so every attempt of the
 * forwarder (same address) is refused with ERR_743. The client waits while the forwarder retries
 * with the shared jittered backoff; once the silent sockets go, the next attempt gets through and
 * the client is served. Before, the first ERR_743 was final and the client was closed.
 */
describe('forwarder retries transient ingress refusals', () => {
  const setup = useEnv({ ingress: { max_handshakes: 8, max_handshakes_per_source: 3 } });

  it(
    'keeps a client waiting through ERR_743 refusals and serves it once the ingress has room',
    { timeout: budget(60_000) },
    async () => {
      const env = await setup();
      await endpoint(env, 'tcp://busy.x:7300', env.echo.upstreamUrl);
      const fwd = await env.start({ limits: { maxDialAttempts: 20, prefaceTimeoutMs: 30_000 } });
      const port = await freePort();
      await createService(env.sim, internalService('ep-busy', { [port]: 'tcp://busy.x:7300' }));
      await waitFor(() => fwd.boundPorts().includes(port), 10_000);

      const { host, port: ingressPort } = parseHostPort(env.ingress);
      const silent: Socket[] = [];
      for (let i = 0; i < 3; i++) {
        const s = connect({ host, port: ingressPort });
        s.on('error', () => undefined);
        await new Promise((r) => s.once('connect', r));
        silent.push(s);
      }
      const refusals = () =>
        metricValue(fwd.registry, 'endpoint_binder_forwarder_ingress_refusals_total', { code: 'ERR_743' });
      try {
        const client = await connectTo(port);
        const answer = roundTrip(client, 'patient', 30_000);
        // The forwarder is retrying: at least two refused attempts, and the client still waits.
        let refused = 0;
        for (let i = 0; i < 300 && refused < 2; i++) {
          refused = await refusals();
          if (refused < 2) await new Promise((r) => setTimeout(r, 50));
        }
        expect(client.destroyed).toBe(false);
        for (const s of silent) s.destroy();
        expect(await answer).toBe('patient');
        client.destroy();
        expect(refused).toBeGreaterThanOrEqual(2);
        // Its line says it was served, with the refusals as history, not as its outcome.
        await waitFor(() => logLines(env, 'forwarder connection').some((l) => l['port'] === port), 10_000);
        const line = logLines(env, 'forwarder connection').find((l) => l['port'] === port)!;
        expect(line, JSON.stringify(line)).toMatchObject({ outcome: 'closed', retried_after: 'ERR_743' });
        expect(line, JSON.stringify(line)).not.toHaveProperty('code');
        expect(line, JSON.stringify(line)).not.toHaveProperty('error');
      } finally {
        for (const s of silent) s.destroy();
      }
    },
  );
});
