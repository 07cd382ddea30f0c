import { describe, expect, it } from 'vitest';
import { waitFor } from '../ingress/helpers.js';
import {
  connectTo,
  createService,
  endpoint,
  freePort,
  internalService,
  logLines,
  roundTrip,
  tryConnect,
  startOver,
  useEnv,
} from './helpers.js';

/**
 * Closing a listener resets whatever waits in its accept queue. When connections still arrive
 * after drain.delaySeconds (the cluster is slower to stop routing than the delay), the forwarder
 * keeps accepting until they stop, serves them, and says which setting to raise.
 */

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

for (const tls of [false, true]) {
  describe(`forwarder drain with late arrivals (${tls ? 'TLS' : 'plain TCP'} to the ingress)`, () => {
    const setup = useEnv({ ingressTls: tls });

    it('serves connections that still arrive after the delay, then stops accepting and names the setting', async () => {
      const env = await setup();
      await endpoint(env, 'tcp://late.x:8500', env.echo.upstreamUrl);
      const fwd = await startOver(env, tls, { drain: { delaySeconds: 1, timeoutSeconds: 20 } });
      const port = await freePort();
      await createService(env.sim, internalService('ep-late', { [port]: 'tcp://late.x:8500' }));
      await waitFor(() => fwd.readiness().ready && fwd.boundPorts().includes(port), 10_000);

      const done = fwd.shutdown();
      // New connections every 200 ms until 2.6 s after the signal: 1.6 s past the delay.
      const started = Date.now();
      const results: string[] = [];
      for (let i = 0; i < 40 && Date.now() - started < 2600; i++) {
        try {
          const s = await connectTo(port);
          results.push(await roundTrip(s, `late ${i}`));
          s.end();
          s.destroy();
        } catch (err) {
          results.push(`failed: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
        }
        await sleep(200);
      }
      expect(results.length).toBeGreaterThan(5);
      expect(results.filter((r) => !r.startsWith('late '))).toEqual([]);

      // Once they stop, it stops accepting.
      await waitFor(() => logLines(env, 'forwarder stopped accepting').length === 1, 10_000);
      expect(await tryConnect(port)).toBe('ECONNREFUSED');
      const warn = logLines(env, 'forwarder accepted past the drain delay');
      expect(warn).toHaveLength(1);
      expect(warn[0]!['late_connections']).toBeGreaterThan(0);
      expect(String(warn[0]!['problem'])).toContain('raise forwarder.drain.delaySeconds');
      await done;
    });

    it('stops accepting at the delay and warns about nothing when no connection arrives late', async () => {
      const env = await setup();
      await endpoint(env, 'tcp://quiet.x:8501', env.echo.upstreamUrl);
      const fwd = await startOver(env, tls, { drain: { delaySeconds: 1, timeoutSeconds: 5 } });
      const port = await freePort();
      await createService(env.sim, internalService('ep-quiet', { [port]: 'tcp://quiet.x:8501' }));
      await waitFor(() => fwd.readiness().ready && fwd.boundPorts().includes(port), 10_000);
      const s = await connectTo(port);
      expect(await roundTrip(s, 'before')).toBe('before');
      s.end();
      s.destroy();
      await sleep(1100);
      await fwd.shutdown();
      expect(logLines(env, 'forwarder stopped accepting')).toHaveLength(1);
      expect(logLines(env, 'forwarder accepted past the drain delay')).toEqual([]);
      expect(await tryConnect(port)).toBe('ECONNREFUSED');
    });
  });
}
