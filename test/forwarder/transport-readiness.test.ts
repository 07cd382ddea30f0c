import { describe, expect, it } from 'vitest';
import { waitFor } from '../ingress/helpers.js';
import {
  connectMaybeReset,
  createService,
  endpoint,
  freePort,
  internalService,
  PROTOCOLS,
  useEnv,
  type Env,
} from './helpers.js';
import type { Forwarder } from '../../src/forwarder/forwarder.js';

async function oneClient(env: Env, fwd: Forwarder): Promise<void> {
  await endpoint(env, 'tcp://tr.x:7800', env.echo.upstreamUrl);
  const port = await freePort();
  await createService(env.sim, internalService('ep-tr', { [port]: 'tcp://tr.x:7800' }));
  await waitFor(() => fwd.boundPorts().includes(port), 10_000);
  const s = connectMaybeReset(port);
  s.write('x');
}

async function notReadyWith(fwd: Forwarder, text: string): Promise<string[]> {
  await waitFor(() => fwd.readiness().reasons.some((r) => r.includes(text)), 20_000).catch(() => undefined);
  return fwd.readiness().reasons;
}

/**
 * A forwarder whose every ingress dial fails for a configuration reason is not ready, with the
 * reason (#27 item 4). Before, a forwarder dialling a plain ingress over TLS (or a TLS ingress in
 * plain TCP) answered /readyz 200 while every client was reset.
 */
describe.each(PROTOCOLS)('forwarder readiness on a transport mismatch (%s)', (protocol) => {
  describe('TLS against a plain ingress', () => {
    const setup = useEnv({ protocol });
    it('is not ready, naming ERR_796 and the setting', async () => {
      const env = await setup();
      const fwd = await env.start({ ingress: { tls: true, address: env.ingress } });
      await oneClient(env, fwd);
      const reasons = await notReadyWith(fwd, 'ERR_796');
      expect(fwd.readiness().ready).toBe(false);
      expect(reasons.join('\n')).toMatch(
        /ERR_796: the ingress at .* does not speak TLS .*set ingress\.tls to false/,
      );
    });
  });

  describe('plain TCP against a TLS ingress', () => {
    const setup = useEnv({ ingressTls: true, protocol });
    it('is not ready, naming ERR_796 and the setting', async () => {
      const env = await setup();
      const fwd = await env.start();
      await oneClient(env, fwd);
      const reasons = await notReadyWith(fwd, 'ERR_796');
      expect(fwd.readiness().ready).toBe(false);
      expect(reasons.join('\n')).toMatch(/ERR_796: the ingress at .* speaks TLS .*set ingress\.tls to true/);
    });
  });
});
